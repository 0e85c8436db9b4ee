/**
 * The conformance suite as data: every case the contract needs, each
 * skipped by name when the store does not offer what it needs, run against
 * the target the author's factory makes once for the whole suite.
 */
import { randomBytes } from 'node:crypto';
import { AssertionError } from 'node:assert';
import type { LockProvider } from '../contract/lock-provider.js';
import type { LockInspectPage, StoredLock } from '../contract/stored-lock.interface.js';
import {
  conformanceCaseTimeout,
  conformanceDeclaredAnyway,
  conformanceMissingMethod,
  conformanceNotSetUpMessage,
  conformanceSkipReason,
} from '../errors/lock.messages.js';
import { CaseRegistrar, type DeclaredCase } from './case-registrar.js';
import type { ConformanceCase, ConformanceContext } from './conformance-case.interface.js';
import type { ConformanceCapability, ConformanceOptions, ConformanceTarget } from './conformance-target.interface.js';
import { check } from './conformance-assert.js';
import { acquireManyCases } from './cases/acquire-many.cases.js';
import { inputLimitsCases } from './cases/input-limits.cases.js';
import { inspectionCases } from './cases/inspection.cases.js';
import { leaseTruthCases } from './cases/lease-truth.cases.js';
import { plainLockCases } from './cases/plain-lock.cases.js';
import { readWriteCases } from './cases/read-write.cases.js';
import { semaphoreCases } from './cases/semaphore.cases.js';
import { waitingCases } from './cases/waiting.cases.js';

/** The suite for one store: its cases, and the set-up and tear-down to run around them (before-all and after-all hooks). */
export interface ConformanceSuite {
  /** The store's name, as given. */
  readonly label: string;
  /** Every case, skipped ones included (with `skipped` saying why). */
  readonly cases: readonly ConformanceCase[];
  /** Makes the target with the author's factory. */
  setUp(): Promise<void>;
  /** Closes the peer and the provider, then runs the target's `cleanup`. */
  tearDown(): Promise<void>;
}

/** The optional methods behind capabilities, and their names in messages. */
const METHODS: Partial<Record<ConformanceCapability, keyof LockProvider>> = {
  acquireMany: 'acquireMany',
  extendMany: 'extendMany',
  holder: 'holder',
  inspect: 'inspect',
};

function declaredCases(): DeclaredCase[] {
  const registrar = new CaseRegistrar();
  plainLockCases(registrar);
  inputLimitsCases(registrar);
  waitingCases(registrar);
  inspectionCases(registrar);
  registrar.describe('semaphores (limit) and read/write locks (mode)', ['limitAndShared', 'waiting'], () => {
    semaphoreCases(registrar);
    readWriteCases(registrar);
  });
  acquireManyCases(registrar);
  leaseTruthCases(registrar);
  return registrar.cases;
}

/** Cases that check a store really lacks what an option turned off (the engine would use it unchecked). */
function absenceCases(label: string, options: ConformanceOptions, provider: () => LockProvider): DeclaredCase[] {
  const cases: DeclaredCase[] = [];
  const add = (option: keyof ConformanceOptions, what: string, declared: (p: LockProvider) => boolean) => {
    if (options[option] !== false) return;
    cases.push({
      group: undefined,
      title: `does not offer ${option}: the store declares no ${what}`,
      needs: [],
      timeout: 5_000,
      body: async () => check(!declared(provider()), conformanceDeclaredAnyway(label, what, option)),
    });
  };
  add('limitAndShared', 'supports.limit or supports.shared', (p) => !!(p.supports?.limit || p.supports?.shared));
  for (const [option, method] of Object.entries(METHODS) as Array<[keyof ConformanceOptions, keyof LockProvider]>)
    add(option, `${method}()`, (p) => typeof p[method] === 'function');
  return cases;
}

const token = () => randomBytes(16).toString('hex');

/**
 * The conformance suite for the store `create` makes, as cases to register
 * with any test runner (see {@link describeLockProviderConformance}, which
 * does it). Keys are unique per case, so suites can share a store.
 */
export function lockProviderConformance(
  label: string,
  create: () => Promise<ConformanceTarget> | ConformanceTarget,
  options: ConformanceOptions = {},
): ConformanceSuite {
  let target: ConformanceTarget | undefined;
  const provider = (): LockProvider => target!.provider;

  const skipReason = (needs: readonly ConformanceCapability[]): string | undefined => {
    const off = needs.find((n) => (n === 'pausedHolder' ? !options.pausedHolder : options[n] === false));
    return off ? conformanceSkipReason(off) : undefined;
  };

  const context = (c: DeclaredCase, cleanups: Array<() => unknown>): ConformanceContext => {
    const t = target!;
    const p = t.provider;
    return {
      p,
      q: t.peer ?? p,
      target: t,
      options,
      label,
      key: `conformance:${token()}`,
      take: async (k, owner, ttl = 30_000) => p.acquire({ key: k, owner, ttl, wait: false }),
      inspectAll: async (prefix: string): Promise<LockInspectPage> => {
        const locks: StoredLock[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await p.inspect!({ prefix, limit: 100, cursor });
          locks.push(...page.locks);
          cursor = page.cursor;
          check(++pages < 5_000, `${label}: inspect() cursors never ended (5,000 pages)`);
        } while (cursor !== undefined);
        return { locks };
      },
      onCleanup: (fn) => void cleanups.push(fn),
    };
  };

  const run = async (c: DeclaredCase, name: string): Promise<void> => {
    if (!target) throw new AssertionError({ message: conformanceNotSetUpMessage(name) });
    for (const need of c.needs) {
      const method = METHODS[need];
      if (method)
        check(typeof target.provider[method] === 'function', conformanceMissingMethod(label, `${method}()`, need));
    }
    const cleanups: Array<() => unknown> = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new AssertionError({ message: conformanceCaseTimeout(name, c.timeout) })),
        c.timeout,
      );
    });
    try {
      await Promise.race([c.body(context(c, cleanups)), late]);
    } finally {
      clearTimeout(timer);
      for (const fn of cleanups.reverse()) await fn();
    }
  };

  const cases = [...declaredCases(), ...absenceCases(label, options, provider)].map((c): ConformanceCase => {
    const name = c.group ? `${c.group} › ${c.title}` : c.title;
    return {
      name,
      group: c.group,
      title: c.title,
      timeout: c.timeout,
      needs: c.needs,
      skipped: skipReason(c.needs),
      run: () => run(c, name),
    };
  });

  return {
    label,
    cases,
    async setUp() {
      target = await create();
    },
    async tearDown() {
      const t = target;
      target = undefined;
      if (!t) return;
      if (t.peer && t.peer !== t.provider) await t.peer.close();
      await t.provider.close();
      await t.cleanup?.();
    },
  };
}
