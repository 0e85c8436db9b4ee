/**
 * A hand-off grants the waiter a short lease (until it is renewed, so a dead
 * waiter cannot hold the key for a whole ttl) and announces the fencing token
 * with it, so the waiter starts without another round trip. The engine must
 * renew that short lease before it ends.
 */
import { LockManager } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import type { Redis } from 'ioredis';
import { sleep } from '../../support/sleep.js';

const url = 'redis://127.0.0.1:6379';

describe('hand-off by notice (Redis)', () => {
  test('the waiter runs on its short hand-off lease, which is renewed to the full ttl before it ends', async () => {
    const a = new LockManager({ provider: new RedisLockProvider({ redis: url, waiterLease: 1_200 }) });
    const b = new LockManager({ provider: new RedisLockProvider({ redis: url, waiterLease: 1_200 }) });
    const name = `hand-off:${Date.now()}`;
    try {
      const first = await a.acquire(name, { ttl: 30_000 });
      const waiting = b.acquire(name, { ttl: 30_000 });
      await sleep(200);
      await first.release();
      const second = await waiting;
      expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
      // Well past the 1.2 s hand-off lease: still held, never lost, nobody else gets in.
      await sleep(3_000);
      expect(second.held).toBe(true);
      expect(second.signal.aborted).toBe(false);
      expect(await a.tryAcquire(name)).toBeNull();
      const pttl = await ((b.provider as RedisLockProvider).client as Redis).pttl(`{lock:${name}}`);
      expect(pttl).toBeGreaterThan(20_000);
      await second.release();
      const third = await a.tryAcquire(name);
      expect(third).not.toBeNull();
      expect(third!.fencingToken).toBeGreaterThan(second.fencingToken);
      await third!.release();
    } finally {
      await a.close();
      await b.close();
      await a.provider.close();
      await b.provider.close();
    }
  });

  // With renew: false nothing renews the short hand-off lease: the waiter's grant must carry its whole ttl.
  test.each([
    ['a plain lock', {}, 1],
    ['a semaphore permit', { limit: 2 }, 2],
    ['a shared hold behind a writer', { mode: 'shared' as const }, 1],
  ])(
    '%s handed over to a waiter with renew: false holds for its whole ttl, not the hand-off lease',
    async (_what, extra, held) => {
      const options = { redis: url, waiterLease: 1_000, commandTimeout: 300 };
      const a = new LockManager({ provider: new RedisLockProvider(options) });
      const b = new LockManager({ provider: new RedisLockProvider(options) });
      const name = `hand-off:no-renew:${Date.now()}:${Math.random()}`;
      // The holders are exclusive (all permits of a semaphore), so that the waiter queues.
      const holderOptions = 'limit' in extra ? { ttl: 30_000, limit: extra.limit } : { ttl: 30_000 };
      try {
        const holders = [];
        for (let i = 0; i < held; i++) holders.push(await a.acquire(name, holderOptions));
        const waiting = b.acquire(name, { ttl: 4_000, renew: false, ...extra });
        await sleep(200);
        await holders[0]!.release();
        const second = await waiting;
        // Well past the 1 s hand-off lease, within the 4 s ttl: still held, and nobody else gets in.
        await sleep(2_000);
        expect(second.held).toBe(true);
        expect(second.signal.aborted).toBe(false);
        expect(await a.tryAcquire(name, 'limit' in extra ? { limit: extra.limit } : {})).toBeNull();
        await second.release();
        for (const h of holders.slice(1)) await h.release();
      } finally {
        await a.close();
        await b.close();
        await a.provider.close();
        await b.provider.close();
      }
    },
  );
});
