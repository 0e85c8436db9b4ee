/**
 * Local hand-off (`localHandOff`, on by default with Redis): waiters of the
 * process that holds a lock wait in-process behind it; those that queued
 * before the store granted it take it in turn on release, with no Redis call
 * and with fencing tokens from the block the grant reserved. Later ones
 * queue at the store behind the other instances. Each manager here has its
 * own provider (its own instance id and connection), as a process would.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  InMemoryLockProvider,
  LockAcquireError,
  LockError,
  LockManager,
  LockOptionsError,
  LockStoreError,
  type LockHandle,
} from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let admin: Redis;
const managers: LockManager[] = [];
function manager(options: { localHandOff?: boolean; commandTimeout?: number; redis?: string } = {}): LockManager {
  const { localHandOff, commandTimeout, redis = url } = options;
  const m = new LockManager({ provider: new RedisLockProvider({ redis, commandTimeout }), localHandOff });
  managers.push(m);
  return m;
}
const unique = (label: string): string => `local:${label}:${randomBytes(5).toString('hex')}`;
/** Waits for `name`, noting `label` in `order` when granted. */
const inOrder = (m: LockManager, name: string, label: string, order: string[]): Promise<LockHandle> =>
  m.acquire(name).then((h) => {
    order.push(label);
    return h;
  });

/** Script calls Redis ran (EVALSHA + EVAL), from INFO commandstats. */
async function scriptCalls(client: Redis = admin): Promise<number> {
  const info = await client.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) calls += Number(m[2]);
  return calls;
}

beforeAll(() => {
  admin = new Redis(url);
});
afterEach(async () => {
  for (const m of managers.splice(0)) {
    await m.close();
    await m.provider.close();
  }
});
afterAll(async () => {
  await admin.quit();
});

test('waiters that queued before the grant take the lock in turn with no Redis call, tokens from the reserved block', async () => {
  const locks = manager();
  const name = unique('turns');
  const a = await locks.acquire(name);
  const order: string[] = [];
  const b = inOrder(locks, name, 'b', order);
  const c = inOrder(locks, name, 'c', order);
  const d = inOrder(locks, name, 'd', order);
  await sleep(100);
  const before = await scriptCalls();
  // b, c and d came after a's grant: a gives the lock back to Redis, b queues there (and is granted at once), c and d follow b locally.
  await a.release();
  const hb = await b;
  await hb.release();
  const hc = await c;
  await hc.release();
  const hd = await d;
  await hd.release();
  // INFO itself is no script; the calls are: a's release, b's acquire, d's release.
  expect((await scriptCalls()) - before).toBe(3);
  expect(order).toEqual(['b', 'c', 'd']);
  expect(hb.fencingToken).toBeGreaterThan(a.fencingToken);
  expect(hc.fencingToken).toBe(hb.fencingToken + 1);
  expect(hd.fencingToken).toBe(hc.fencingToken + 1);
  // The next grant from Redis draws above the whole block.
  const next = await locks.acquire(name);
  expect(next.fencingToken).toBeGreaterThanOrEqual(hb.fencingToken + 16);
  await next.release();
});

test('localHandOff must be a boolean', () => {
  const provider = new InMemoryLockProvider();
  expect(() => new LockManager({ provider, localHandOff: 'yes' as never })).toThrow(LockOptionsError);
  expect(() => new LockManager({ provider, localHandOff: 'yes' as never })).toThrow(/localHandOff/);
});

test('with localHandOff: false every waiter queues in Redis and each release is a Redis call', async () => {
  const locks = manager({ localHandOff: false });
  const name = unique('off');
  const a = await locks.acquire(name);
  const waiting = [locks.acquire(name), locks.acquire(name), locks.acquire(name)];
  await sleep(100);
  expect(await admin.llen(`{lock:${name}}:q`)).toBe(3);
  const before = await scriptCalls();
  await a.release();
  let last = a.fencingToken;
  for (const w of waiting) {
    const h = await w;
    expect(h.fencingToken).toBeGreaterThan(last);
    last = h.fencingToken;
    await h.release();
  }
  expect((await scriptCalls()) - before).toBeGreaterThanOrEqual(4);
});

test('a try answers "held" without Redis while this process holds the lock', async () => {
  const locks = manager();
  const name = unique('try');
  const a = await locks.acquire(name);
  const before = await scriptCalls();
  expect(await locks.tryAcquire(name)).toBeNull();
  await expect(locks.withLock(name, () => 'ran')).rejects.toBeInstanceOf(LockAcquireError);
  expect(await locks.withLock(name, () => 'ran', { onHeld: 'skip' })).toBeUndefined();
  expect((await scriptCalls()) - before).toBe(0);
  await a.release();
  expect(await locks.withLock(name, () => 'ran')).toBe('ran');
});

test('instances take turns: a later waiter of the holder goes before an earlier one of another instance only within the extra half of its turn', async () => {
  const p = manager();
  const q = manager();
  const name = unique('turns-between');
  const order: string[] = [];
  const take = (m: LockManager, label: string) => inOrder(m, name, label, order);
  const p1 = await take(p, 'p1');
  const q1 = take(q, 'q1');
  while ((await admin.llen(`{lock:${name}}:q`)) < 1) await sleep(10);
  const p2 = take(p, 'p2'); // after p1's grant and after q1
  await sleep(50);
  await p1.release();
  const hq1 = await q1;
  const q2 = take(q, 'q2'); // after q1's grant
  const p3 = take(p, 'p3'); // before p2's grant: p2's batch
  await sleep(50);
  await hq1.release();
  const hp2 = await p2;
  const p4 = take(p, 'p4'); // after p2's grant: a turn of 2 sections has room for 1 more
  const p5 = take(p, 'p5'); // no room left: queues in Redis, behind q2
  await sleep(50);
  await hp2.release();
  const hp3 = await p3;
  await hp3.release();
  const hp4 = await p4;
  await hp4.release();
  const hq2 = await q2;
  await hq2.release();
  const hp5 = await p5;
  await hp5.release();
  expect(order).toEqual(['p1', 'q1', 'p2', 'p3', 'p4', 'q2', 'p5']);
  const tokens = [p1, hq1, hp2, hp3, hp4, hq2, hp5].map((h) => h.fencingToken);
  for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
  expect([hp3.fencingToken, hp4.fencingToken]).toEqual([hp2.fencingToken + 1, hp2.fencingToken + 2]);
});

test('a waiter in the process times out or aborts as usual, and the others go on', async () => {
  const locks = manager();
  const name = unique('leave');
  const a = await locks.acquire(name);
  const started = Date.now();
  const timedOut = locks.acquire(name, { waitTimeout: 300 });
  const controller = new AbortController();
  const aborted = locks.acquire(name, { signal: controller.signal });
  const later = locks.acquire(name);
  controller.abort(new Error('caller gave up'));
  await expect(aborted).rejects.toThrow('caller gave up');
  const error = await timedOut.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(LockAcquireError);
  expect((error as LockAcquireError).reason).toBe('timeout');
  expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  await a.release();
  const h = await later;
  expect(h.fencingToken).toBeGreaterThan(a.fencingToken);
  await h.release();
});

test('a holder that loses its lease passes the turn to the next waiter, which gets the key from Redis', async () => {
  const locks = manager();
  const name = unique('lost');
  const a = await locks.acquire(name, { ttl: 400, renew: false });
  const waiting = locks.acquire(name, { ttl: 5_000 }).then((h) => ({ h, at: Date.now() }));
  const lost = new Promise((r) => a.signal.addEventListener('abort', r, { once: true }));
  const lostAt = await lost.then(() => Date.now());
  const { h, at } = await waiting;
  expect(a.held).toBe(false);
  expect(at - lostAt).toBeLessThan(1_500);
  expect(h.fencingToken).toBeGreaterThan(a.fencingToken);
  expect(await admin.get(`{lock:${name}}`)).not.toBeNull();
  await h.release();
  expect(await a.release()).toBe(false);
});

test('close() fails the waiters queued in the process with LockError and releases the holder', async () => {
  const locks = manager();
  const name = unique('close');
  await locks.acquire(name);
  const waiting = locks.acquire(name);
  await sleep(50);
  managers.splice(managers.indexOf(locks), 1);
  await locks.close();
  const error = await waiting.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(LockError);
  expect((error as Error).message).toMatch(/closed/);
  expect(await admin.exists(`{lock:${name}}`)).toBe(0);
  await locks.provider.close();
});

test('a waiter that does not renew is never handed a shorter lease than its ttl: it takes the lock from Redis', async () => {
  const p = manager();
  const other = manager();
  const name = unique('no-renew');
  const x = await other.acquire(name, { ttl: 10_000 });
  const a = p.acquire(name, { ttl: 10_000 }); // this process's caller at the store
  while ((await admin.llen(`{lock:${name}}:q`)) < 1) await sleep(10);
  const b = p.acquire(name, { ttl: 8_000, renew: false }); // behind it in the process, before its grant
  await sleep(50);
  await x.release();
  const ha = await a;
  await sleep(200);
  const before = await scriptCalls();
  await ha.release();
  const hb = await b;
  // a's lease (a hand-off's, at most the waiter lease) could not cover b's 8 s: b was granted by Redis, with all of it.
  expect((await scriptCalls()) - before).toBeGreaterThanOrEqual(2);
  expect(await admin.pttl(`{lock:${name}}`)).toBeGreaterThan(7_000);
  expect(hb.fencingToken).toBeGreaterThan(ha.fencingToken);
  await hb.release();
});

test('a queue entry of an older version (no block size) is still handed the lock, with one token', async () => {
  const provider = new RedisLockProvider({ redis: url });
  const key = `lock:${unique('old-entry')}`;
  try {
    const grant = await provider.acquire({ key, owner: 'holder', ttl: 10_000, wait: false });
    expect(grant).not.toBeNull();
    await admin.rpush(`{${key}}:q`, 'old-waiter');
    await admin.hset(`{${key}}:w`, 'old-waiter', `${Date.now() + 60_000} 5000 0123456789abcdef`);
    // A counter hours ahead of the server clock, so that the hand-off draws from it (not from the clock): one token.
    const ahead = grant!.fencingToken + 1e10;
    await admin.set(`{${key}}:fence`, String(ahead));
    expect(await provider.release(key, 'holder')).toBe(true);
    expect(await admin.get(`{${key}}`)).toBe('old-waiter');
    expect(Number(await admin.get(`{${key}}:fence`))).toBe(ahead + 1);
  } finally {
    await admin.del(`{${key}}`, `{${key}}:fence`, `{${key}}:q`, `{${key}}:w`);
    await provider.close();
  }
});

describe('Redis paused with waiters queued in the process', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    server.resume();
    await server.stop();
  });

  test('each waiter fails with LockStoreError within its own bounded call, not one after the other', async () => {
    const COMMAND_TIMEOUT = 400;
    const locks = manager({ redis: server.url, commandTimeout: COMMAND_TIMEOUT });
    const name = unique('paused');
    const a: LockHandle = await locks.acquire(name);
    const waiters = Array.from({ length: 5 }, () =>
      locks.acquire(name).then(
        () => 'granted',
        (err: unknown) => err,
      ),
    );
    await sleep(50);
    server.pause();
    const started = Date.now();
    expect(await a.release()).toBe(false); // logged; its lease ends on its own
    const results = await Promise.all(waiters);
    const elapsed = Date.now() - started;
    server.resume();
    for (const r of results) expect(r).toBeInstanceOf(LockStoreError);
    // One after the other would be 5 × 400 ms; the first waiter's call and then all the others' at once take about 2 × 400 ms.
    expect(elapsed).toBeLessThan(4 * COMMAND_TIMEOUT);
  });
});
