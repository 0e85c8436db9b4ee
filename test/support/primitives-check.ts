/**
 * The parent side of the multi-process tests of semaphores, read/write locks
 * and several names at once: starts the children of a store's fixture, lets
 * them run together, and checks the sections they recorded on the store's
 * clock (see primitives-workload.ts) against what each primitive promises.
 */
import type { ChildProcess } from 'node:child_process';
import { ChildLines, spawnFixture } from './child-process.js';
import {
  canonical,
  NAME_SETS,
  SEMAPHORE_LIMIT,
  type Primitive,
  type SectionRecord,
  type WorkloadResult,
} from './primitives-workload.js';

/** 3 processes on 2 cores, 3 callers each, for 2 s per primitive. */
export const PROCESSES = 3;
export const CALLERS = 3;
export const DURATION_MS = 2_000;

/** The sections of all processes, and the calls that failed or saw a violation inside. */
export interface Collected {
  sections: SectionRecord[];
  violations: string[];
  errors: string[];
}

/** `PROCESSES` children of a store's fixture, started once for a spec file and told which primitive to run, all at once. */
export class PrimitiveChildren {
  private readonly children: ChildProcess[];
  private readonly lines: ChildLines[];

  constructor(fixture: URL, args: Record<string, unknown>) {
    this.children = Array.from({ length: PROCESSES }, () =>
      spawnFixture(fixture, { ...args, callers: CALLERS, durationMs: DURATION_MS }),
    );
    this.lines = this.children.map((c) => new ChildLines(c));
  }

  /** Resolves once every child is connected. */
  async ready(): Promise<void> {
    await Promise.all(this.lines.map((l) => l.next('ready', 30_000)));
  }

  /** Runs `primitive` in every child at once and collects what they recorded. */
  async run(primitive: Primitive): Promise<Collected> {
    for (const c of this.children) c.stdin!.write(`${primitive}\n`);
    // A deadlock shows as a child that never reports: the callers' waitTimeout (30 s) and this margin are far above the 2 s run.
    const results = (await Promise.all(this.lines.map((l) => l.next('result ', 60_000)))).map(
      (r) => JSON.parse(r) as WorkloadResult,
    );
    return {
      sections: results.flatMap((r) => r.sections),
      violations: results.flatMap((r) => r.violations),
      errors: results.flatMap((r) => r.errors),
    };
  }

  /** Asks the children to close and exit; kills those still running after 10 s. */
  async stop(): Promise<void> {
    const exits = this.children
      .filter((c) => c.exitCode === null)
      .map((c) => new Promise<void>((resolve) => c.once('exit', () => resolve())));
    for (const c of this.children) c.stdin!.end('exit\n');
    const timer = setTimeout(() => this.children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')), 10_000);
    await Promise.all(exits);
    clearTimeout(timer);
  }
}

/** Every entry and exit of `sections`, in store-clock order. */
function clockEvents(sections: readonly SectionRecord[]): Array<{ at: number; s: SectionRecord; enter: boolean }> {
  const events = sections.flatMap((s) => [
    { at: s[0], s, enter: true },
    { at: s[1], s, enter: false },
  ]);
  return events.sort((a, b) => a.at - b.at);
}

/**
 * Walks the sections in store-clock order (every entry and exit is one tick
 * of one clock, taken after the grant and before the release, so a recorded
 * section lies within the real holding): the most sections open at once, and
 * the entries that found an open section they conflict with.
 */
export function sweep(
  sections: readonly SectionRecord[],
  conflict: (entering: SectionRecord, open: SectionRecord) => boolean,
): { maxOpen: number; conflicts: number } {
  const events = clockEvents(sections);
  const open = new Set<SectionRecord>();
  let maxOpen = 0;
  let conflicts = 0;
  for (const e of events) {
    if (!e.enter) {
      open.delete(e.s);
      continue;
    }
    for (const o of open) if (conflict(e.s, o)) conflicts++;
    open.add(e.s);
    maxOpen = Math.max(maxOpen, open.size);
  }
  return { maxOpen, conflicts };
}

/**
 * Fencing tokens against the store clock, per name: a section that entered
 * after a section it `conflict`s with had exited was granted after that one
 * was released, so must carry a greater token; and no two grants of a name
 * share a token. Returns how many sections broke either rule.
 */
export function tokenDisorder(
  sections: readonly SectionRecord[],
  conflict: (entering: SectionRecord, exited: SectionRecord) => boolean,
): number {
  const exited: SectionRecord[] = [];
  const seen = new Map<string, Set<number>>();
  let disorder = 0;
  for (const { s, enter } of clockEvents(sections)) {
    if (!enter) {
      exited.push(s);
      continue;
    }
    for (const [name, token] of Object.entries(s[3])) {
      const tokens = seen.get(name) ?? seen.set(name, new Set()).get(name)!;
      if (tokens.has(token)) disorder++;
      tokens.add(token);
      if (exited.some((e) => e[3][name] !== undefined && e[3][name] >= token && conflict(s, e))) disorder++;
    }
  }
  return disorder;
}

/** Read/write: the most shared sections open at once, and entries that met a section of the other kind (or a second writer). */
export function readWriteSweep(sections: readonly SectionRecord[]): { maxShared: number; conflicts: number } {
  const { conflicts } = sweep(sections, (a, b) => a[2] === 'x' || b[2] === 'x');
  const { maxOpen: maxShared } = sweep(
    sections.filter((s) => s[2] === 's'),
    () => false,
  );
  return { maxShared, conflicts };
}

/** Multi-name: the names a section held (its name set, in canonical order). */
export const heldNames = (s: SectionRecord): string[] => canonical(NAME_SETS[Number(s[2])]!);

/** Multi-name: entries that met an open section holding one of the same names, and how many sections held each name. */
export function multiNameSweep(sections: readonly SectionRecord[]): {
  conflicts: number;
  perName: Record<string, number>;
} {
  const { conflicts } = sweep(sections, (a, b) => heldNames(a).some((n) => heldNames(b).includes(n)));
  const perName: Record<string, number> = {};
  for (const s of sections) for (const n of heldNames(s)) perName[n] = (perName[n] ?? 0) + 1;
  return { conflicts, perName };
}

/** A store under test: its fixture, the settings its children get, and how the parent reads a ledger counter afterwards. */
export interface PrimitivesStore {
  fixture: URL;
  /** Settings for every child (connection, table, ...), beside the namespace. */
  args: Record<string, unknown>;
  /** Prefix of every lock and ledger key of this spec file. */
  namespace: string;
  /** Ledger counter `key`, read after the children reported. */
  counter(key: string): Promise<number>;
}

/** The tests of `primitives` (one each) on one store; the children start once for all (about 10 s for the three). */
export function primitivesAcrossProcesses(
  store: PrimitivesStore,
  primitives: readonly Primitive[] = ['semaphore', 'read-write', 'multi-name'],
): void {
  const callers = `${PROCESSES} processes × ${CALLERS} callers for ${DURATION_MS / 1000} s`;
  let children: PrimitiveChildren;
  beforeAll(async () => {
    children = new PrimitiveChildren(store.fixture, { ...store.args, namespace: store.namespace });
    await children.ready();
  }, 40_000);
  afterAll(async () => {
    await children.stop();
  }, 20_000);

  const run = async (primitive: Primitive): Promise<Collected> => {
    const collected = await children.run(primitive);
    expect(collected.errors).toEqual([]);
    expect(collected.violations).toEqual([]);
    return collected;
  };

  if (primitives.includes('semaphore'))
    test(`semaphore, limit ${SEMAPHORE_LIMIT}, ${callers}: never more than ${SEMAPHORE_LIMIT} inside, ${SEMAPHORE_LIMIT} at once reached, each permit slot's counter exact`, async () => {
      const { sections } = await run('semaphore');
      expect(sections.length).toBeGreaterThan(20);
      expect(sweep(sections, () => false).maxOpen).toBe(SEMAPHORE_LIMIT);
      // Permits overlap, so a later entry may carry an earlier grant's token; every grant's token is its own.
      expect(tokenDisorder(sections, () => false)).toBe(0);
      // Each section took a free slot (a missing one is a violation above) and did a non-atomic read-modify-write of its counter.
      let total = 0;
      for (let slot = 0; slot < SEMAPHORE_LIMIT; slot++) total += await store.counter(`slot:${slot}`);
      expect(total).toBe(sections.length);
    }, 90_000);

  if (primitives.includes('read-write'))
    test(`read/write, ${callers}, one in four a write: a writer never overlaps another holder, readers do overlap, the written counter is exact`, async () => {
      const { sections } = await run('read-write');
      const writes = sections.filter((s) => s[2] === 'x').length;
      expect(writes).toBeGreaterThan(5);
      expect(sections.length - writes).toBeGreaterThan(5);
      const { maxShared, conflicts } = readWriteSweep(sections);
      expect(conflicts).toBe(0);
      expect(maxShared).toBeGreaterThanOrEqual(2);
      expect(tokenDisorder(sections, (a, b) => a[2] === 'x' || b[2] === 'x')).toBe(0);
      expect(await store.counter('written')).toBe(writes);
    }, 90_000);

  if (primitives.includes('multi-name'))
    test(`several names in opposite orders (${NAME_SETS.map((s) => s.join('+')).join(', ')}), ${callers}: every call completes, a section holds all its names alone, each name's counter exact`, async () => {
      const { sections } = await run('multi-name');
      expect(sections.length).toBeGreaterThan(20);
      const { conflicts, perName } = multiNameSweep(sections);
      expect(conflicts).toBe(0);
      expect(tokenDisorder(sections, () => true)).toBe(0); // compared per name the two sections share
      for (const name of ['a', 'b', 'c']) {
        expect(perName[name]).toBeGreaterThan(0);
        expect(await store.counter(`count:${name}`)).toBe(perName[name]);
        expect(await store.counter(`held:${name}`)).toBe(0);
      }
    }, 90_000);
}
