/**
 * What a lock name leaves in Redis: its fencing counter is kept while the
 * name's plain lock may hold it, and after the release only until the Redis
 * clock has passed the counter (plus FENCE_GRACE_MS); tokens keep growing
 * across the moment it vanishes. Against a Redis this file starts (DBSIZE
 * counts its keys and nothing else).
 */
import { Redis } from 'ioredis';
import { LockManager, type LockHandle } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS } from '../../../lib/stores/redis/redis-lock.scripts.js';
import { RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

let server: RedisServer;
let admin: Redis;
let provider: RedisLockProvider;
let locks: LockManager;

beforeAll(async () => {
  server = await RedisServer.start();
  admin = new Redis(server.url);
  provider = new RedisLockProvider({ redis: server.url });
  locks = new LockManager({ provider });
});
afterAll(async () => {
  await locks?.close();
  await provider?.close();
  await admin?.quit();
  await server?.stop();
});

/** The server clock in microseconds. */
async function serverMicros(): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1_000_000 + Number(us);
}

test('names locked once each (plain, waited for, handed over in the process, several at once, semaphore, shared) leave no key in Redis once the window has passed', async () => {
  const names = Array.from({ length: 200 }, (_, i) => `order:${i}`);
  await Promise.all(names.map((name) => locks.withLock(name, () => sleep(1))));
  // Three callers of one process per name: a store grant with a block of tokens, then local hand-offs.
  await Promise.all(
    names
      .slice(0, 50)
      .flatMap((name) => [0, 1, 2].map(() => locks.withLock(`${name}:busy`, () => sleep(1), { onHeld: 'wait' }))),
  );
  // A waiter of another process, handed the lock by the release script.
  const other = new LockManager({ provider: new RedisLockProvider({ redis: server.url }) });
  try {
    const held = await locks.acquire('handed');
    const waiting = other.withLock('handed', () => sleep(1), { onHeld: 'wait', waitTimeout: 10_000 });
    await sleep(100);
    await held.release();
    await waiting;
  } finally {
    await other.close();
    await other.provider.close();
  }
  await locks.withLock(['many:a', 'many:b', 'many:c'], () => sleep(1));
  await locks.withLock('permits', () => sleep(1), { limit: 3 });
  await locks.withLock('reads', () => sleep(1), { mode: 'shared' });
  const renewed = await locks.acquire('renewed', { ttl: 1_000 });
  await sleep(1_200); // renewed at least once
  await renewed.release();

  // Right after the releases: at most the counter of each name.
  expect(await admin.dbsize()).toBeLessThanOrEqual(names.length + 50 + 8);
  await sleep(FENCE_GRACE_MS + 1_000);
  expect(await admin.keys('*')).toEqual([]);
}, 60_000);

test('a counter ahead of the clock lives until the clock passes it, and every grant, before and after it vanished, gets a greater token', async () => {
  // As after a failover to a master whose clock is behind (or after more than one token per microsecond): 4 s ahead.
  const ahead = (await serverMicros()) + 4_000_000;
  await admin.set('{lock:ahead}:fence', String(ahead));
  const tokens: number[] = [];
  const take = async (): Promise<void> => {
    const handle = (await locks.tryAcquire('ahead')) as LockHandle;
    tokens.push(handle.fencingToken);
    await handle.release();
  };
  await take();
  expect(tokens[0]).toBeGreaterThan(ahead);
  // Kept until the clock passes the counter (about 4 s), plus the grace.
  const left = await admin.pttl('{lock:ahead}:fence');
  expect(left).toBeGreaterThan(3_000 + FENCE_GRACE_MS);
  expect(left).toBeLessThanOrEqual(4_000 + FENCE_GRACE_MS + 1_000);
  await sleep(FENCE_GRACE_MS + 500);
  expect(await admin.exists('{lock:ahead}:fence')).toBe(1); // past the grace, but the clock is still behind it
  await take();
  while ((await admin.exists('{lock:ahead}:fence')) === 1) await sleep(200);
  await take();
  expect(tokens[1]).toBeGreaterThan(tokens[0]);
  expect(tokens[2]).toBeGreaterThan(tokens[1]);
  await sleep(FENCE_GRACE_MS + 1_000);
  expect(await admin.exists('{lock:ahead}', '{lock:ahead}:fence')).toBe(0);
}, 30_000);

test('while a plain lock is held the counter lives as long as its lease (extends included), so inspection shows its token and grant time past the window', async () => {
  const handle = await locks.acquire('long', { ttl: FENCE_GRACE_MS + 1_000, renew: false });
  const granted = Date.now();
  await sleep(FENCE_GRACE_MS + 500);
  await handle.extend(10_000);
  expect(await admin.pttl('{lock:long}:fence')).toBeGreaterThan(10_000 - 1_000);
  await sleep(FENCE_GRACE_MS + 1_000);
  // The store's own view (not this process's knowledge of its lock): the counter, at most 15 above the grant's token.
  const seen = (await provider.inspect({ prefix: 'lock:long', limit: 10 })).locks.find((l) => l.key === 'lock:long');
  expect(seen?.fencingToken).toBeGreaterThanOrEqual(handle.fencingToken);
  expect(seen?.fencingToken).toBeLessThan(handle.fencingToken + 16);
  expect(Math.abs(seen!.heldSince! - granted)).toBeLessThan(1_000);
  await handle.release();
  // Released: the counter goes at once (the clock passed it long ago).
  expect(await admin.exists('{lock:long}', '{lock:long}:fence')).toBe(0);
}, 30_000);
