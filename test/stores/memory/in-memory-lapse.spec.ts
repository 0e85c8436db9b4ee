import { InMemoryLockProvider, LockManager } from '../../../lib/index.js';
import { IDLE_SWEEP_MS } from '../../../lib/stores/memory/idle-sweep.js';
import { memoryLeftovers } from '../../support/memory-leftovers.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Names whose holder lost the lock (the lease ran out, nobody released it)
 * leave the in-memory store within the stated window, without anyone
 * touching the name again: apps that lock per entity do not grow the map.
 */
describe('InMemoryLockProvider drops lapsed names', () => {
  test('leases that ran out without a release (renew: false) are gone after the sweep window; a held name stays', async () => {
    const provider = new InMemoryLockProvider();
    const manager = new LockManager({ provider });
    const names = Array.from({ length: 50 }, (_, i) => `order:${i}`);
    for (const name of names) expect(await manager.tryAcquire(name, { ttl: 200, renew: false })).not.toBeNull();
    const held = await manager.tryAcquire('ledger', { ttl: 60_000, renew: false });
    expect(held).not.toBeNull();
    const key = (name: string): string => provider.keyPrefix + name;
    expect(memoryLeftovers(provider, key(names[0]))).toEqual([key(names[0])]);

    await sleep(200 + IDLE_SWEEP_MS + 1_000);
    for (const name of names) expect(memoryLeftovers(provider, key(name))).toEqual([]);
    expect(memoryLeftovers(provider, key('ledger'))).toEqual([key('ledger')]);
    expect(provider.isHeld('ledger')).toBe(true);

    await held!.release();
    await sleep(IDLE_SWEEP_MS + 1_000);
    expect(memoryLeftovers(provider, key('ledger'))).toEqual([]);
    // The map is empty: the sweep timer stopped until a name is taken again.
    expect((provider as unknown as { sweep: { timer: unknown } }).sweep.timer).toBeUndefined();
    await provider.close();
  });
});
