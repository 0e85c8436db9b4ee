/**
 * The child side of the multi-process tests of semaphores, read/write locks
 * and several names at once: callers of one process loop on a LockManager for
 * a while, and record each section's entry and exit on a clock kept by the
 * store itself (so the parent can order the sections of all processes
 * exactly), with store-side checks made inside the section.
 */
import { createInterface } from 'node:readline';
import type { LockManager } from '../../lib/index.js';
import { sleep } from './sleep.js';

/** The store-side bookkeeping the sections use (Redis keys, or PostgreSQL rows). */
export interface Ledger {
  /** Adds `delta` to counter `key` atomically (from 0); resolves with the new value. */
  add(key: string, delta: number): Promise<number>;
  /** Reads counter `key` (0 when unset): half of a non-atomic read-modify-write. */
  read(key: string): Promise<number>;
  /** Writes counter `key`: the other half. */
  write(key: string, value: number): Promise<void>;
  /** Marks flag `key` taken if it is free, atomically; resolves with whether it did. */
  claim(key: string): Promise<boolean>;
  /** Frees flag `key`. */
  unclaim(key: string): Promise<void>;
}

/** The ledger's `clock` counter: one clock for the sections of all processes. */
const tick = (ledger: Ledger): Promise<number> => ledger.add('clock', 1);

/** Claims the first free of the permit slots `taken:0` … `taken:<limit - 1>`; `null` when all are taken. */
async function claimSlot(ledger: Ledger, limit: number): Promise<number | null> {
  for (let slot = 0; slot < limit; slot++) if (await ledger.claim(`taken:${slot}`)) return slot;
  return null;
}

/** Which primitive a child exercises. */
export type Primitive = 'semaphore' | 'read-write' | 'multi-name';

/** The semaphore's permits. */
export const SEMAPHORE_LIMIT = 3;
/** Name sets of the multi-name callers, by caller index: opposite orders, overlapping sets, duplicates. */
export const NAME_SETS: readonly (readonly string[])[] = [
  ['a', 'b'],
  ['b', 'a'],
  ['c', 'b', 'a'],
  ['a', 'c', 'a'],
  ['b'],
];

/**
 * One section: store clock at entry and exit, what it held (`x` exclusive,
 * `s` shared, or the name set's index), and its fencing token per name.
 */
export type SectionRecord = [enter: number, exit: number, what: string, tokens: Record<string, number>];

/** What a child prints at the end. */
export interface WorkloadResult {
  sections: SectionRecord[];
  /** Failures seen inside sections (a slot missing, a name's counter not 1, a handle's names wrong), first few. */
  violations: string[];
  /** Calls that threw (a wait timed out, the store failed), first few. */
  errors: string[];
}

/** Whether caller `caller`'s `i`-th read/write section is a write: one in four. */
export const isWrite = (caller: number, i: number): boolean => (caller + i) % 4 === 0;

/** The canonical order the engine takes names in: sorted, duplicates collapsed. */
export const canonical = (names: readonly string[]): string[] => [...new Set(names)].sort();

/**
 * Runs `callers` loops of `primitive` sections on `locks` until `durationMs`
 * has passed (each loop finishes its current section), lock names prefixed by
 * the manager's key prefix. Counter keys: `slot:<k>` (semaphore, one per permit slot),
 * `written` (read/write), `count:<name>` and `held:<name>` (multi-name).
 */
export async function runWorkload(
  locks: LockManager,
  ledger: Ledger,
  primitive: Primitive,
  callers: number,
  durationMs: number,
): Promise<WorkloadResult> {
  const result: WorkloadResult = { sections: [], violations: [], errors: [] };
  const note = (list: string[], text: string): void => void (list.length < 5 && list.push(text));
  const wait = { onHeld: 'wait' as const, waitTimeout: 30_000, ttl: 10_000 };
  const deadline = Date.now() + durationMs;

  const semaphore = async (): Promise<void> => {
    await locks.withLock(
      'sem',
      async (lock) => {
        const enter = await tick(ledger);
        const slot = await claimSlot(ledger, SEMAPHORE_LIMIT);
        if (slot === null) note(result.violations, `all ${SEMAPHORE_LIMIT} permit slots were taken at entry`);
        else {
          const n = await ledger.read(`slot:${slot}`);
          await sleep(3);
          await ledger.write(`slot:${slot}`, n + 1);
          await ledger.unclaim(`taken:${slot}`);
        }
        result.sections.push([enter, await tick(ledger), 'x', { sem: lock.fencingToken }]);
      },
      { ...wait, limit: SEMAPHORE_LIMIT },
    );
  };

  const readWrite = async (write: boolean): Promise<void> => {
    await locks.withLock(
      'rw',
      async (lock) => {
        const enter = await tick(ledger);
        if (write) {
          const n = await ledger.read('written');
          await sleep(1);
          await ledger.write('written', n + 1);
        } else {
          await sleep(4);
        }
        result.sections.push([enter, await tick(ledger), write ? 'x' : 's', { rw: lock.fencingToken }]);
      },
      { ...wait, mode: write ? 'exclusive' : 'shared' },
    );
  };

  const multiName = async (set: number): Promise<void> => {
    const names = NAME_SETS[set]!;
    const held = canonical(names);
    await locks.withLock(
      names,
      async (lock) => {
        const enter = await tick(ledger);
        const { names: got, fencingTokens: tokens } = lock;
        if (JSON.stringify(got) !== JSON.stringify(held))
          note(result.violations, `handle names ${JSON.stringify(got)}, expected ${JSON.stringify(held)}`);
        if (JSON.stringify(Object.keys(tokens).sort()) !== JSON.stringify(held))
          note(result.violations, `fencing tokens ${JSON.stringify(tokens)} for names ${JSON.stringify(held)}`);
        // Every name must be ours alone: its holder count goes from 0 to 1.
        for (const name of held) {
          const holders = await ledger.add(`held:${name}`, 1);
          if (holders !== 1)
            note(result.violations, `${JSON.stringify(names)}: "${name}" had ${holders} holders inside the section`);
        }
        for (const name of held) await ledger.write(`count:${name}`, (await ledger.read(`count:${name}`)) + 1);
        await sleep(1);
        for (const name of held) await ledger.add(`held:${name}`, -1);
        result.sections.push([enter, await tick(ledger), String(set), { ...tokens }]);
      },
      wait,
    );
  };

  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; Date.now() < deadline; i++) {
        try {
          if (primitive === 'semaphore') await semaphore();
          else if (primitive === 'read-write') await readWrite(isWrite(caller, i));
          else await multiName((caller + i) % NAME_SETS.length);
        } catch (err) {
          note(result.errors, err instanceof Error ? `${err.name}: ${err.message}` : String(err));
          await sleep(50); // a call that fails at once must not spin
        }
      }
    }),
  );
  return result;
}

/** What a fixture parses from its argument: the store's settings plus these. */
export interface WorkloadArgs {
  /** Prefix of every lock key and ledger key of the spec file. */
  namespace: string;
  callers: number;
  durationMs: number;
}

/**
 * The body of a fixture: builds its manager and ledger from the parsed
 * argument and prints `ready`; then, for each line on stdin naming a
 * primitive, runs that workload and prints `result <json>`; on `exit` (or
 * the end of stdin) closes and exits.
 */
export async function serveWorkload<A extends WorkloadArgs>(
  build: (args: A) => Promise<{ locks: LockManager; ledger: Ledger; close(): Promise<void> }>,
): Promise<void> {
  const args = JSON.parse(process.argv[2]!) as A;
  const { locks, ledger, close } = await build(args);
  await locks.provider.ping();
  console.log('ready');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'exit') break;
    const result = await runWorkload(locks, ledger, line as Primitive, args.callers, args.durationMs);
    console.log(`result ${JSON.stringify(result)}`);
  }
  await locks.close();
  await close();
  process.exit(0);
}
