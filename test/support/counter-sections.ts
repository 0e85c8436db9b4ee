/** The multi-process store tests' workload (run in their worker processes): sections under one lock. */
import type { LockService } from '../../lib/index.js';

/** One section a worker ran under the lock: its fencing token, and when it entered and left (wall-clock ms). */
export interface CounterSection {
  token: number;
  enter: number;
  exit: number;
}

const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * Runs `sections` sections under the lock `counter`, `concurrency` callers
 * sharing them (so waiters queue in the process and across processes); each
 * runs `bump` (a non-atomic read-modify-write of a shared counter).
 */
export async function runCounterSections(
  locks: LockService,
  sections: number,
  concurrency: number,
  bump: () => Promise<void>,
): Promise<CounterSection[]> {
  const done: CounterSection[] = [];
  let left = sections;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        await locks.withLock(
          'counter',
          async (lock) => {
            const enter = wallNow();
            await bump();
            done.push({ token: lock.fencingToken, enter, exit: wallNow() });
          },
          { onHeld: 'wait', waitTimeout: 60_000, ttl: 10_000 },
        );
      }
    }),
  );
  return done;
}

/**
 * A worker's `mutex` mode: tells the parent it is ready (IPC), waits for its
 * go, runs SECTIONS sections with CONCURRENCY callers (from env; 100 and 1 by
 * default) through {@link runCounterSections}, and prints one JSON line
 * `{pid, sections}`.
 */
export async function runCounterWorker(locks: LockService, bump: () => Promise<void>): Promise<void> {
  process.send?.('ready');
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  const sections = await runCounterSections(
    locks,
    Number(process.env.SECTIONS ?? 100),
    Number(process.env.CONCURRENCY ?? 1),
    bump,
  );
  process.stdout.write(JSON.stringify({ pid: process.pid, sections }) + '\n');
}
