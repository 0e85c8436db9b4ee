/**
 * Semaphores (`limit`) and shared (read/write) locks in Redis, beyond the
 * conformance suite: a semaphore holder killed with SIGKILL gives its permit
 * back after its own lease; waiters of two providers (two connections) are
 * woken on release in arrival order; a permit's transfer to a new owner;
 * the limit-disagreement error; and a plain lock and a group taking turns
 * on one name.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { LockOptionsError } from '../../../lib/index.js';
import type { LockAcquireRequest, LockGrant } from '../../../lib/contract/lock-provider.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { ChildLines, spawnFixture } from '../../support/child-process.js';
import { sleep } from '../../support/sleep.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let redis: Redis;
let a: RedisLockProvider;
let b: RedisLockProvider;
beforeAll(() => {
  redis = new Redis(url);
  a = new RedisLockProvider({ redis: url, waiterLease: 1_500 });
  b = new RedisLockProvider({ redis: url, waiterLease: 1_500 });
});
afterAll(async () => {
  await a.close();
  await b.close();
  await redis.quit();
});

const newKey = (what: string): string => `groups:${what}:${randomBytes(6).toString('hex')}`;
const owner = (): string => randomBytes(16).toString('hex');

/** A request with a fresh owner; `wait` unless `options.wait` says otherwise. */
function request(key: string, options: Partial<LockAcquireRequest> = {}): LockAcquireRequest {
  return { key, owner: owner(), ttl: 10_000, wait: true, waitTimeout: 10_000, ...options };
}

/** Acquires and returns the owner with the grant. */
async function take(
  provider: RedisLockProvider,
  req: LockAcquireRequest,
): Promise<{ owner: string; grant: LockGrant | null }> {
  return { owner: req.owner, grant: await provider.acquire(req) };
}

test('a semaphore holder killed with SIGKILL keeps its permit until its own lease ends, then a waiter gets it', async () => {
  const key = newKey('crash');
  const child = spawnFixture(new URL('./fixtures/group-holder-child.js', import.meta.url), {
    url,
    key,
    ttl: 2_000,
    limit: 2,
  });
  try {
    const held = Number(await new ChildLines(child).next('held '));
    const mine = await take(a, request(key, { limit: 2, wait: false }));
    expect(mine.grant).not.toBeNull();
    await sleep(300); // the child renews at least once
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const killedAt = Date.now();

    // Both permits are taken: a try is refused, a waiter queues.
    expect(await b.acquire(request(key, { limit: 2, wait: false }))).toBeNull();
    const waiting = take(b, request(key, { limit: 2 })).then((r) => ({ ...r, at: Date.now() }));
    await sleep(500);
    expect(await b.acquire(request(key, { limit: 2, wait: false }))).toBeNull();
    const next = await waiting;
    expect(next.grant).not.toBeNull();
    // The child's lease (2 s from its last renewal, at most ~700 ms before the kill) ended; no hand-off came from it.
    expect(next.at - killedAt).toBeGreaterThan(500);
    expect(next.at - killedAt).toBeLessThan(4_000);
    expect(next.grant!.fencingToken).toBeGreaterThan(Math.max(held, mine.grant!.fencingToken));
    // The surviving holder still holds its own permit.
    expect(await a.extend(key, mine.owner, 10_000)).toBe(true);
    expect(await a.release(key, mine.owner)).toBe(true);
    expect(await b.release(key, next.owner)).toBe(true);
  } finally {
    child.kill('SIGKILL');
  }
});

test('waiters of two providers are woken on release in arrival order, shared ones together after the writer', async () => {
  const key = newKey('order');
  const writer = await take(a, request(key, { wait: false }));
  expect(writer.grant).not.toBeNull();
  const order: string[] = [];
  const queued: Array<Promise<{ name: string; owner: string; grant: LockGrant | null; provider: RedisLockProvider }>> =
    [];
  const enqueue = async (
    name: string,
    provider: RedisLockProvider,
    options: Partial<LockAcquireRequest>,
  ): Promise<void> => {
    queued.push(
      take(provider, request(key, options)).then((r) => {
        order.push(name);
        return { name, provider, ...r };
      }),
    );
    await sleep(100); // arrival order across the two connections
  };
  await enqueue('r1', b, { mode: 'shared' });
  await enqueue('r2', a, { mode: 'shared' });
  await enqueue('w2', b, {});
  await enqueue('r3', a, { mode: 'shared' });
  expect(order).toEqual([]);

  expect(await a.release(key, writer.owner)).toBe(true);
  await sleep(300);
  // The two readers at the head enter together; the writer behind them waits, and so does the reader behind it.
  expect(order.sort()).toEqual(['r1', 'r2']);
  const [r1, r2, w2, r3] = queued;
  const readers = await Promise.all([r1, r2]);
  expect(await readers[0].provider.release(key, readers[0].owner)).toBe(true);
  await sleep(200);
  expect(order).toHaveLength(2);
  expect(await readers[1].provider.release(key, readers[1].owner)).toBe(true);
  const second = await w2;
  expect(order[2]).toBe('w2');
  await sleep(200);
  expect(order).toHaveLength(3);
  expect(await b.release(key, second.owner)).toBe(true);
  const third = await r3;
  expect(third.grant!.fencingToken).toBeGreaterThan(second.grant!.fencingToken);
  expect(second.grant!.fencingToken).toBeGreaterThan(Math.max(...readers.map((r) => r.grant!.fencingToken)));
  expect(await a.release(key, third.owner)).toBe(true);
});

test('semaphore waiters of two providers enter in arrival order as permits come back', async () => {
  const key = newKey('permits');
  const holders = [await take(a, request(key, { limit: 2 })), await take(b, request(key, { limit: 2 }))];
  const order: number[] = [];
  const waiters = [];
  for (let i = 0; i < 4; i++) {
    waiters.push(
      take(i % 2 ? a : b, request(key, { limit: 2 })).then((r) => (order.push(i), { ...r, provider: i % 2 ? a : b })),
    );
    await sleep(100);
  }
  expect(await a.release(key, holders[0].owner)).toBe(true);
  const first = await waiters[0];
  await sleep(200);
  expect(order).toEqual([0]);
  expect(await b.release(key, holders[1].owner)).toBe(true);
  const second = await waiters[1];
  expect(order).toEqual([0, 1]);
  expect(await first.provider.release(key, first.owner)).toBe(true);
  expect(await second.provider.release(key, second.owner)).toBe(true);
  const rest = await Promise.all([waiters[2], waiters[3]]);
  expect(order).toEqual([0, 1, 2, 3]);
  for (const r of rest) expect(await r.provider.release(key, r.owner)).toBe(true);
  expect(await redis.exists(`{${key}}`, `{${key}}:h`, `{${key}}:t`, `{${key}}:q`)).toBe(0);
});

test('transfer hands a permit to a new owner with a larger token, the holder count unchanged and the queue passed over; null once the old owner holds none', async () => {
  const key = newKey('transfer');
  const [first, second] = [await take(a, request(key, { limit: 2 })), await take(a, request(key, { limit: 2 }))];
  const queued = take(b, request(key, { limit: 2 }));
  while ((await redis.llen(`{${key}}:q`)) === 0) await sleep(10);
  const next = owner();
  const moved = await a.transfer(key, first.owner, next, 10_000);
  expect(moved!.fencingToken).toBeGreaterThan(second.grant!.fencingToken);
  expect(await redis.zcard(`{${key}}:h`)).toBe(2);
  expect(await redis.llen(`{${key}}:q`)).toBe(1);
  expect(Number(await redis.hget(`{${key}}:t`, next))).toBe(moved!.fencingToken);
  // The old owner holds nothing: its extend, release and a second transfer answer so.
  expect(await a.extend(key, first.owner, 10_000)).toBe(false);
  expect(await a.release(key, first.owner)).toBe(false);
  expect(await a.transfer(key, first.owner, owner(), 10_000)).toBeNull();
  expect(await a.extend(key, next, 10_000)).toBe(true);
  // The new owner's release frees the permit for the queued waiter.
  expect(await a.release(key, next)).toBe(true);
  const waiter = await queued;
  expect(waiter.grant!.fencingToken).toBeGreaterThan(moved!.fencingToken);
  expect(await b.release(key, waiter.owner)).toBe(true);
  expect(await a.release(key, second.owner)).toBe(true);
  expect(await redis.exists(`{${key}}`, `{${key}}:h`, `{${key}}:t`, `{${key}}:q`)).toBe(0);
});

test('transfer from a holder whose lease ended hands nothing over and drops that holder', async () => {
  const key = newKey('transfer-ended');
  const [short, full] = [
    await take(a, request(key, { limit: 2, ttl: 100 })),
    await take(a, request(key, { limit: 2 })),
  ];
  const serverMs = async (): Promise<number> => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };
  while (Number(await redis.zscore(`{${key}}:h`, short.owner)) >= (await serverMs())) await sleep(20);
  // The giver's entry is still there (no call purged it yet), its lease over.
  expect(await redis.zscore(`{${key}}:h`, short.owner)).not.toBeNull();
  const next = owner();
  expect(await a.transfer(key, short.owner, next, 10_000)).toBeNull();
  expect(await redis.zrange(`{${key}}:h`, '0', '-1')).toEqual([full.owner]);
  expect(await redis.hexists(`{${key}}:t`, next)).toBe(0);
  expect(await a.release(key, full.owner)).toBe(true);
  expect(await redis.exists(`{${key}}`, `{${key}}:h`, `{${key}}:t`, `{${key}}:q`)).toBe(0);
});

test('an exclusive request with another limit than the holders or waiters of the key throws LockOptionsError naming both', async () => {
  const key = newKey('mismatch');
  const held = await take(a, request(key, { limit: 2, wait: false }));
  expect(held.grant).not.toBeNull();
  for (const req of [
    request(key, { limit: 3 }),
    request(key, { limit: 3, wait: false }),
    request(key, { wait: false }),
    request(key),
  ]) {
    const error = await b.acquire(req).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(LockOptionsError);
    const message = (error as Error).message;
    expect(message).toContain(key);
    expect(message).toContain(`limit ${req.limit ?? 1}`);
    expect(message).toContain('limit 2');
    expect(message.toLowerCase()).toContain('give every caller of this name the same limit');
  }
  // Shared requests carry no limit: they wait (here: are refused) like any other.
  expect(await b.acquire(request(key, { mode: 'shared', wait: false }))).toBeNull();
  // A waiter with limit 2 queues; the limit is recorded for the queue too.
  const full = await take(a, request(key, { limit: 2, wait: false }));
  const waiting = take(b, request(key, { limit: 2 }));
  await sleep(100);
  expect(await a.release(key, held.owner)).toBe(true);
  expect(await a.release(key, full.owner)).toBe(true);
  const next = await waiting;
  await expect(a.acquire(request(key, { limit: 5, wait: false }))).rejects.toThrow(LockOptionsError);
  expect(await b.release(key, next.owner)).toBe(true);
  // Nothing holds or waits: any limit is fine again.
  const fresh = await take(a, request(key, { limit: 5, wait: false }));
  expect(fresh.grant).not.toBeNull();
  expect(await a.release(key, fresh.owner)).toBe(true);
});

test('a semaphore caller finds a plain waiter queued behind shared holders (plain waiters are not counted) and is refused naming limit 1', async () => {
  const key = newKey('mismatch-queued');
  const reader = await take(a, request(key, { mode: 'shared', wait: false }));
  expect(reader.grant).not.toBeNull();
  const writer = take(b, request(key));
  await sleep(100);
  // The plain waiter left no count in the waiters hash: only semaphore waiters are counted.
  expect(await redis.hmget(`{${key}}:w`, '#n', '#L')).toEqual([null, null]);
  for (const req of [request(key, { limit: 3 }), request(key, { limit: 3, wait: false })]) {
    const error = await a.acquire(req).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(LockOptionsError);
    expect((error as Error).message).toContain('limit 1');
    expect((error as Error).message).toContain('limit 3');
  }
  // A semaphore waiter is counted, and its count goes when it is served.
  expect(await a.release(key, reader.owner)).toBe(true);
  const wrote = await writer;
  expect(wrote.grant).not.toBeNull();
  expect(await b.release(key, wrote.owner)).toBe(true);
  const permits = await Promise.all([1, 2, 3].map(() => take(a, request(key, { limit: 3, wait: false }))));
  expect(permits.every((p) => p.grant)).toBe(true);
  const permit = take(b, request(key, { limit: 3 }));
  await sleep(100);
  expect(await redis.hmget(`{${key}}:w`, '#n', '#L')).toEqual(['1', '3']);
  expect(await a.release(key, permits[0].owner)).toBe(true);
  const got = await permit;
  expect(got.grant).not.toBeNull();
  expect(await redis.hmget(`{${key}}:w`, '#n', '#L')).toEqual([null, null]);
  for (const p of permits.slice(1)) expect(await a.release(key, p.owner)).toBe(true);
  expect(await b.release(key, got.owner)).toBe(true);
});

test('a plain lock and shared holders exclude each other on one name; holder() names a group holder; release and extend are per holder', async () => {
  const key = newKey('mixed');
  const r1 = await take(a, request(key, { mode: 'shared', wait: false }));
  const r2 = await take(b, request(key, { mode: 'shared', wait: false, ttl: 20_000 }));
  expect(r1.grant && r2.grant).toBeTruthy();
  expect(await a.acquire(request(key, { wait: false }))).toBeNull();
  const found = await a.holder(key);
  expect(found?.owner).toBe(r2.owner);
  expect(found!.remainingMs).toBeGreaterThan(10_000);
  // Not the owner: nothing changes.
  expect(await a.release(key, owner())).toBe(false);
  expect(await b.extend(key, r2.owner, 30_000)).toBe(true);
  expect(await redis.pttl(`{${key}}`)).toBeGreaterThan(20_000);
  expect(await b.release(key, r2.owner)).toBe(true);
  expect(await b.release(key, r2.owner)).toBe(false);
  expect(await redis.pttl(`{${key}}`)).toBeLessThanOrEqual(10_000);
  const plain = take(b, request(key));
  await sleep(100);
  expect(await a.release(key, r1.owner)).toBe(true);
  const w = await plain;
  expect(w.grant!.fencingToken).toBeGreaterThan(r2.grant!.fencingToken);
  expect(await redis.get(`{${key}}`)).toBe(w.owner);
  expect(await b.release(key, w.owner)).toBe(true);
  expect(await redis.exists(`{${key}}`, `{${key}}:h`, `{${key}}:t`, `{${key}}:q`, `{${key}}:w`)).toBe(0);
});

test('extendMany renews places in a group (each its own lease) together with plain locks, answering in order', async () => {
  const key = newKey('renew');
  const plainKey = newKey('renew-plain');
  const s1 = await take(a, request(key, { limit: 2, wait: false, ttl: 2_000 }));
  const s2 = await take(a, request(key, { limit: 2, wait: false, ttl: 2_000 }));
  const plain = await take(a, request(plainKey, { wait: false, ttl: 2_000 }));
  const r = await take(a, request(`${key}:rw`, { mode: 'shared', wait: false, ttl: 2_000 }));
  expect(await a.release(key, s2.owner)).toBe(true);
  const answers = await a.extendMany([
    { key, owner: s1.owner, ttl: 30_000 },
    { key: plainKey, owner: plain.owner, ttl: 30_000 },
    { key, owner: s2.owner, ttl: 30_000 },
    { key: `${key}:rw`, owner: r.owner, ttl: 30_000 },
  ]);
  expect(answers).toEqual([true, true, false, true]);
  expect(await redis.pttl(`{${key}}`)).toBeGreaterThan(20_000);
  expect(await redis.pttl(`{${key}:rw}`)).toBeGreaterThan(20_000);
  expect(await redis.zcard(`{${key}}:h`)).toBe(1);
  for (const [k, o] of [
    [key, s1.owner],
    [plainKey, plain.owner],
    [`${key}:rw`, r.owner],
  ])
    expect(await a.release(k, o)).toBe(true);
});

test('a plain wait behind a queued reader queues at once: a reader that calls right after it queues behind it', async () => {
  const key = newKey('fifo');
  const x = await take(a, request(key, { wait: false }));
  const r1 = take(a, request(key, { mode: 'shared' }));
  await sleep(200);
  // The same tick: the writer's call comes first, so it is ahead of r3 in the queue.
  const w = take(a, request(key));
  let r3Done = false;
  const r3 = take(a, request(key, { mode: 'shared' })).then((t) => ((r3Done = true), t));
  await sleep(200);
  expect(await a.release(key, x.owner)).toBe(true);
  const first = await r1;
  expect(first.grant).not.toBeNull();
  await sleep(300);
  expect(r3Done).toBe(false); // r3 would have entered together with r1 had it queued ahead of the writer
  expect(await a.release(key, first.owner)).toBe(true);
  const writer = await w;
  expect(writer.grant).not.toBeNull();
  expect(await a.release(key, writer.owner)).toBe(true);
  const reader = await r3;
  expect(reader.grant).not.toBeNull();
  expect(await a.release(key, reader.owner)).toBe(true);
});
