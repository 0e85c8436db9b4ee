/**
 * The conformance suite registered with the author's test runner: Jest,
 * Vitest and node:test all take `describe(name, fn)` and `it(name, fn)`, and
 * a before-all and after-all hook (`beforeAll`/`afterAll`, or node:test's
 * `before`/`after`). The cases a store does not offer are not registered
 * (a runner runs every case it lists): one warning names each of them with
 * the reason, so the output says what was not run.
 */
import { conformanceLeftOutMessage, conformanceRunnerMessage } from '../errors/lock.messages.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import { lockProviderConformance } from './conformance-suite.js';
import type { ConformanceOptions, ConformanceTarget } from './conformance-target.interface.js';

/**
 * The parts of a test runner the kit uses: pass them as your runner exports
 * them, with one before-all and one after-all hook.
 */
export interface ConformanceRunner {
  /** Opens a group of cases. */
  describe: (name: string, fn: () => void) => unknown;
  /** Registers a case (`test` works too). */
  it: (name: string, fn: () => Promise<void>) => unknown;
  /** Jest, Vitest. */
  beforeAll?: (fn: () => Promise<void>) => unknown;
  /** Jest, Vitest. */
  afterAll?: (fn: () => Promise<void>) => unknown;
  /** node:test. */
  before?: (fn: () => Promise<void>) => unknown;
  /** node:test. */
  after?: (fn: () => Promise<void>) => unknown;
}

/** Longest set-up and tear-down (the author's factory, closing the store), in ms. */
const HOOK_TIMEOUT_MS = 60_000;
/** What the runner's own timeout adds to a case's (the kit fails a late case itself, with a message). */
const RUNNER_MARGIN_MS = 10_000;

/**
 * Registers the conformance suite for the store `create` makes, under
 * `describe('LockProvider conformance: <label>')`:
 *
 * ```ts
 * import { describe, it, beforeAll, afterAll } from 'vitest'; // or @jest/globals, or { describe, it, before, after } from 'node:test'
 * import { describeLockProviderConformance } from 'nest-lock/testing';
 * describeLockProviderConformance('MyStore', () => ({ provider: new MyStore() }), { describe, it, beforeAll, afterAll });
 * ```
 *
 * `options` turns off what the store does not offer; those cases are not
 * registered, and a warning (`console.warn`, once) names each with the
 * reason. Docs: docs/custom-store.md.
 */
export function describeLockProviderConformance(
  label: string,
  create: () => Promise<ConformanceTarget> | ConformanceTarget,
  runner: ConformanceRunner,
  options: ConformanceOptions = {},
): void {
  const beforeAll = runner?.beforeAll ?? runner?.before;
  const afterAll = runner?.afterAll ?? runner?.after;
  if (
    typeof runner?.describe !== 'function' ||
    typeof runner.it !== 'function' ||
    typeof beforeAll !== 'function' ||
    typeof afterAll !== 'function'
  ) {
    throw new LockOptionsError(
      conformanceRunnerMessage(
        runner === null || typeof runner !== 'object' ? String(runner) : `{ ${Object.keys(runner).join(', ')} }`,
      ),
    );
  }
  const suite = lockProviderConformance(label, create, options);
  const withTimeout = (fn: unknown, ...args: unknown[]) => (fn as (...a: unknown[]) => unknown)(...args);
  const leftOut = suite.cases.flatMap((c) => (c.skipped === undefined ? [] : [{ name: c.name, reason: c.skipped }]));
  if (leftOut.length > 0) console.warn(conformanceLeftOutMessage(label, leftOut));
  const offered = suite.cases.filter((c) => c.skipped === undefined);
  const register = (cases: typeof suite.cases) => {
    for (const c of cases) withTimeout(runner.it, c.title, c.run, c.timeout + RUNNER_MARGIN_MS);
  };
  runner.describe(`LockProvider conformance: ${label}`, () => {
    withTimeout(beforeAll, () => suite.setUp(), HOOK_TIMEOUT_MS);
    withTimeout(afterAll, () => suite.tearDown(), HOOK_TIMEOUT_MS);
    const groups = [...new Set(offered.map((c) => c.group))];
    for (const group of groups) {
      const cases = offered.filter((c) => c.group === group);
      if (group === undefined) register(cases);
      else runner.describe(group, () => register(cases));
    }
  });
}
