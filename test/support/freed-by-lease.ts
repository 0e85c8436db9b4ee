/** A multi-process store test's check: a killed holder's lock frees when its lease ends, not before. */
import { expect } from '@jest/globals';
import type { LockProvider } from '../../lib/index.js';
import { sleep } from './sleep.js';
import type { Worker } from './worker-process.js';

/**
 * After a holder with lease `ttl` (renewed every ttl/3) was killed at
 * `killedAt`: the lock `lock:victim` is not free at once nor 0.8 s later, and a waiter gets
 * it 2–3 s after the kill, when the last renewed lease ends.
 */
export async function expectFreedByLease(provider: LockProvider, killedAt: number, ttl: number): Promise<void> {
  expect(await provider.acquire({ key: 'lock:victim', owner: 'probe-1', ttl: 1_000, wait: false })).toBeNull();
  await new Promise((r) => setTimeout(r, 800));
  expect(await provider.acquire({ key: 'lock:victim', owner: 'probe-2', ttl: 1_000, wait: false })).toBeNull();
  const grant = await provider.acquire({
    key: 'lock:victim',
    owner: 'heir',
    ttl: 5_000,
    wait: true,
    waitTimeout: 15_000,
  });
  const waited = Date.now() - killedAt;
  expect(grant).not.toBeNull();
  // The last renewal was at most ttl/3 (+ slack) before the kill: the lease ends 2–3 s after it.
  expect(waited).toBeGreaterThanOrEqual(ttl * (2 / 3) - 300);
  expect(waited).toBeLessThan(ttl + 3_000);
}

/**
 * Waits for `holder` (a worker in mode `hold` with lease `ttl`) to print
 * `HELD <token>` (within `heldMs`; a token above 0), lets one renewal go
 * through, kills it with SIGKILL, and checks with the provider `open` makes
 * (closed after) that the lock frees by its lease ({@link expectFreedByLease}).
 */
export async function expectKilledHolderFreedByLease(
  holder: Worker,
  ttl: number,
  open: () => LockProvider,
  heldMs?: number,
): Promise<void> {
  const held = await holder.line('HELD ', heldMs);
  expect(Number(held.split(' ')[1])).toBeGreaterThan(0);
  await sleep(1_200); // at least one renewal went through
  holder.child.kill('SIGKILL');
  const killedAt = Date.now();
  await holder.exited;

  const provider = open();
  try {
    await expectFreedByLease(provider, killedAt, ttl);
  } finally {
    await provider.close();
  }
}
