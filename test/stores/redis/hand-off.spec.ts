/**
 * A hand-off grants the waiter a short lease (until it is renewed, so a dead
 * waiter cannot hold the key for a whole ttl) and announces the fencing token
 * with it, so the waiter starts without another round trip. The engine must
 * renew that short lease before it ends.
 */
import { LockManager } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
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
      const pttl = await (b.provider as RedisLockProvider).client.pttl(`{lock:${name}}`);
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
});
