/**
 * Processes that die: a holder killed with SIGKILL keeps the lock until its
 * lease ends, then a waiter gets it; a waiter killed while queued holds up
 * the queue for about one waiter lease at most.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { ChildLines, spawnFixture } from '../../support/child-process.js';
import { sleep } from '../../support/sleep.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let redis: Redis;
let locks: LockManager;
beforeAll(() => {
  redis = new Redis(url);
  locks = new LockManager({ provider: new RedisLockProvider({ redis: url, waiterLease: 1_500 }) });
});
afterAll(async () => {
  await locks.close();
  await locks.provider.close();
  await redis.quit();
});

test('a holder killed with SIGKILL: nobody enters before its lease ends, a waiter does right after', async () => {
  const name = `crash:${randomBytes(6).toString('hex')}`;
  const child = spawnFixture(new URL('./fixtures/lock-child.js', import.meta.url), { url, name, ttl: 2_000 });
  try {
    const held = Number(await new ChildLines(child).next('held '));
    await sleep(300); // let it renew at least once
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const pttl = await redis.pttl(`{lock:${name}}`);
    const leaseEnd = Date.now() + pttl;
    expect(pttl).toBeGreaterThan(500);

    const waiting = locks.acquire(name, { ttl: 5_000, waitTimeout: 10_000 }).then((h) => ({ h, at: Date.now() }));
    while (Date.now() < leaseEnd - 200) {
      expect(await locks.tryAcquire(name)).toBeNull();
      await sleep(100);
    }
    const { h, at } = await waiting;
    expect(at).toBeGreaterThanOrEqual(leaseEnd - 20);
    expect(at).toBeLessThan(leaseEnd + 1_000);
    expect(h.fencingToken).toBeGreaterThan(held);
    await h.release();
  } finally {
    child.kill('SIGKILL');
  }
});

test('a waiter killed with SIGKILL while queued holds up the next waiter by about one waiter lease at most', async () => {
  const name = `crash-waiter:${randomBytes(6).toString('hex')}`;
  // The holder is another instance: a waiter of the holder's own process would wait in-process, not in the Redis queue.
  const other = new LockManager({ provider: new RedisLockProvider({ redis: url, waiterLease: 1_500 }) });
  const holder = await other.tryAcquire(name, { ttl: 30_000 });
  expect(holder).not.toBeNull();
  const child = spawnFixture(new URL('./fixtures/lock-child.js', import.meta.url), {
    url,
    name,
    ttl: 30_000,
    wait: true,
    waiterLease: 1_500,
  });
  try {
    await new ChildLines(child).next('waiting');
    while ((await redis.llen(`{lock:${name}}:q`)) < 1) await sleep(20);
    const next = locks.acquire(name, { ttl: 30_000, waitTimeout: 15_000 }).then((h) => ({ h, at: Date.now() }));
    while ((await redis.llen(`{lock:${name}}:q`)) < 2) await sleep(20);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const killedAt = Date.now();
    await holder!.release();
    const { h, at } = await next;
    // the dead waiter's entry lasts <= 1.5 s past its last refresh; a hand-off to it <= 1.5 s more
    expect(at - killedAt).toBeLessThan(3_000 + 1_000);
    await h.release();
  } finally {
    child.kill('SIGKILL');
    await other.close();
    await other.provider.close();
  }
});
