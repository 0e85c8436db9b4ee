/**
 * RedisLockProvider specifics beyond the conformance suite: key layout,
 * script cache flushes, bounded calls on dead or silent servers, close(),
 * give-up races, the cost of a contended section, and module wiring.
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { LockManager, LockModule, LockOptionsError, LockProvider, LockStoreError } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS } from '../../../lib/stores/redis/redis-lock.scripts.js';
import { SCRIPTS } from '../../../lib/stores/redis/redis-lock.scripts.js';
import { RedisServer } from '../../support/redis-server.js';
import { freePort } from '../../support/free-port.js';
import { sleep } from '../../support/sleep.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const unique = (what: string) => `${what}:${randomBytes(6).toString('hex')}`;

let redis: Redis;
let provider: RedisLockProvider;
beforeAll(() => {
  redis = new Redis(url);
  provider = new RedisLockProvider({ redis: url });
});
afterAll(async () => {
  await provider.close();
  await redis.quit();
});

test('keys: {key} and {key}:fence, plus {key}:q and {key}:w only while someone waits', async () => {
  const key = unique('layout');
  await provider.acquire({ key, owner: 'a', ttl: 10_000, wait: false });
  expect(await redis.get(`{${key}}`)).toBe('a');
  expect(await redis.exists(`{${key}}:fence`)).toBe(1);
  // The counter lives as long as the lease, and a little more (FENCE_GRACE_MS); after the release only until the clock passes it.
  const fenceTtl = await redis.pttl(`{${key}}:fence`);
  expect(fenceTtl).toBeGreaterThan(10_000);
  expect(fenceTtl).toBeLessThanOrEqual(10_000 + FENCE_GRACE_MS);
  expect(await redis.exists(key)).toBe(0); // the app's own key of that name is never touched
  const waiting = provider.acquire({ key, owner: 'b', ttl: 10_000, wait: true });
  while ((await redis.llen(`{${key}}:q`)) === 0) await sleep(10);
  expect(await redis.hexists(`{${key}}:w`, 'b')).toBe(1);
  await provider.release(key, 'a');
  expect(await waiting).not.toBeNull();
  expect(await redis.exists(`{${key}}:q`, `{${key}}:w`)).toBe(0);
  expect(await redis.get(`{${key}}`)).toBe('b');
  await provider.release(key, 'b');
  expect(await redis.exists(`{${key}}`)).toBe(0);
});

test('a try on a free key with waiters queued does not jump the queue: the head gets the key', async () => {
  const key = unique('try-queue');
  expect(await provider.acquire({ key, owner: 'a', ttl: 300, wait: false })).not.toBeNull();
  const waiting = provider.acquire({ key, owner: 'b', ttl: 10_000, wait: true });
  while ((await redis.llen(`{${key}}:q`)) === 0) await sleep(10);
  // a's lease runs out with b still queued (b would re-check at the end of it; the try comes first or not, either way)
  await sleep(320);
  expect(await provider.acquire({ key, owner: 'c', ttl: 10_000, wait: false })).toBeNull();
  expect(await waiting).not.toBeNull();
  expect(await redis.get(`{${key}}`)).toBe('b');
  await provider.release(key, 'b');
  const free = await provider.acquire({ key, owner: 'd', ttl: 10_000, wait: false });
  expect(free).not.toBeNull();
  await provider.release(key, 'd');
});

test('a wait on a free key with waiters queued (its lease ran out) does not jump the queue either', async () => {
  const key = unique('wait-queue');
  // A provider that has not seen this key contended: its wait starts with the small script.
  const fresh = new RedisLockProvider({ redis: url });
  try {
    expect(await provider.acquire({ key, owner: 'a', ttl: 300, wait: false })).not.toBeNull();
    const b = provider.acquire({ key, owner: 'b', ttl: 10_000, wait: true });
    while ((await redis.llen(`{${key}}:q`)) === 0) await sleep(10);
    await sleep(320);
    let cGranted = false;
    const c = fresh.acquire({ key, owner: 'c', ttl: 10_000, wait: true }).then((g) => {
      cGranted = true;
      return g;
    });
    expect(await b).not.toBeNull();
    expect(await redis.get(`{${key}}`)).toBe('b');
    await sleep(100);
    expect(cGranted).toBe(false);
    await provider.release(key, 'b');
    expect(await c).not.toBeNull();
    expect(await redis.get(`{${key}}`)).toBe('c');
    await fresh.release(key, 'c');
  } finally {
    await fresh.close();
  }
});

test('a wait on a free key is one script call; a key a wait found held queues at once the next time', async () => {
  const server = await RedisServer.start();
  const admin = new Redis(server.url);
  const p = new RedisLockProvider({ redis: server.url });
  const other = new RedisLockProvider({ redis: server.url });
  /** Script calls Redis ran since the last look (INFO itself is none). */
  let seen = 0;
  const calls = async (): Promise<number> => {
    const info = await admin.info('commandstats');
    let total = 0;
    for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) total += Number(m[2]);
    const since = total - seen;
    seen = total;
    return since;
  };
  const wait = (provider: RedisLockProvider, owner: string) =>
    provider.acquire({ key: 'k', owner, ttl: 10_000, wait: true });
  try {
    // Loaded up front: a first EVALSHA of each script would fail with NOSCRIPT and count twice.
    for (const script of Object.values(SCRIPTS)) await admin.script('LOAD', script.source);
    await calls();
    expect(await wait(p, 'a')).not.toBeNull();
    expect(await calls()).toBe(1);
    await p.release('k', 'a');
    await calls();
    // Held by another instance: the small script answers "held", the full one queues.
    expect(await other.acquire({ key: 'k', owner: 'x', ttl: 10_000, wait: false })).not.toBeNull();
    await calls();
    const b = wait(p, 'b');
    while ((await admin.llen('{k}:q')) === 0) await sleep(10);
    expect(await calls()).toBe(2);
    await other.release('k', 'x');
    expect(await b).not.toBeNull();
    await p.release('k', 'b');
    await calls();
    // The key was contended: the next wait skips the small script (and, granted at once, forgets the contention)...
    expect(await wait(p, 'c')).not.toBeNull();
    expect(await calls()).toBe(1);
    await p.release('k', 'c');
    await calls();
    expect(await wait(p, 'd')).not.toBeNull();
    expect(await calls()).toBe(1);
    await p.release('k', 'd');
    // ...and a wait that found the key held still waits out its own timeout, no more.
    expect(await other.acquire({ key: 'k', owner: 'y', ttl: 10_000, wait: false })).not.toBeNull();
    const started = Date.now();
    // (a timeout of at least commandTimeout: this wait starts with the small script too)
    expect(await p.acquire({ key: 'k', owner: 'e', ttl: 10_000, wait: true, waitTimeout: 2_500 })).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_400);
    expect(Date.now() - started).toBeLessThan(5_000);
    // (it leaves the queue right after it gave up)
    const leaveBy = Date.now() + 1_000;
    while ((await admin.llen('{k}:q')) > 0 && Date.now() < leaveBy) await sleep(10);
    expect(await admin.llen('{k}:q')).toBe(0);
  } finally {
    await p.close();
    await other.close();
    await admin.quit();
    await server.stop();
  }
});

/** The socket of an ioredis client, as the provider's write batching sees it. */
interface ClientSocket {
  writableCorked: number;
  writableLength: number;
}

/** `fn` with a provider on a client passed in (the app's, connected), and that client's socket; closes both after. */
async function onAppClient(
  fn: (client: Redis, shared: RedisLockProvider, socket: ClientSocket) => Promise<void>,
): Promise<void> {
  const client = new Redis(url);
  const shared = new RedisLockProvider({ redis: client });
  try {
    await shared.ping(); // connected, and its check of the eviction policy (at connect) answered: no call in flight
    await fn(client, shared, (client as unknown as { stream: ClientSocket }).stream);
  } finally {
    await shared.close();
    expect(client.status).toBe('ready'); // left open: it is the app's
    await client.quit();
  }
}

test("on a client passed in, the app's own commands and lock calls of one turn keep their order", () =>
  onAppClient(async (client, shared) => {
    const key = unique('order');
    // (a first EVALSHA that fails with NOSCRIPT would go again, after the others)
    for (const script of Object.values(SCRIPTS)) await client.script('LOAD', script.source);
    // All issued in one turn of the event loop: they reach Redis in this order.
    const set = client.set(`${key}:app`, 'before');
    const granted = shared.acquire({ key, owner: 'a', ttl: 10_000, wait: true });
    const lockValue = client.get(`{${key}}`);
    const appValue = client.get(`${key}:app`);
    const many = Array.from({ length: 50 }, (_, i) =>
      shared.acquire({ key: `${key}:${i}`, owner: `o${i}`, ttl: 10_000, wait: false }),
    );
    expect(await set).toBe('OK');
    expect(await granted).not.toBeNull();
    expect(await lockValue).toBe('a');
    expect(await appValue).toBe('before');
    expect((await Promise.all(many)).every((g) => g !== null)).toBe(true);
    expect(await shared.release(key, 'a')).toBe(true);
    for (let i = 0; i < 50; i++) expect(await shared.release(`${key}:${i}`, `o${i}`)).toBe(true);
  }));

test('a lone call is written at once; while another call is in flight, the calls of one turn are held back, and leave every 16 calls', () =>
  onAppClient(async (_, shared, socket) => {
    const key = unique('cork');
    const lone = shared.acquire({ key, owner: 'a', ttl: 10_000, wait: false });
    expect(socket.writableCorked).toBe(0);
    expect(await lone).not.toBeNull();
    const first = shared.release(key, 'a');
    expect(socket.writableCorked).toBe(0);
    const second = shared.acquire({ key: `${key}:2`, owner: 'b', ttl: 10_000, wait: false });
    const third = shared.acquire({ key: `${key}:3`, owner: 'c', ttl: 10_000, wait: false });
    expect(socket.writableCorked).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.writableCorked).toBe(0);
    expect(await first).toBe(true);
    expect(await second).not.toBeNull();
    expect(await third).not.toBeNull();
    expect(await shared.release(`${key}:2`, 'b')).toBe(true);
    expect(await shared.release(`${key}:3`, 'c')).toBe(true);

    // Many calls in one turn: the held writes leave every 16 calls, not only at the end of the turn.
    const tries: Array<Promise<unknown>> = [];
    const lengths: number[] = [];
    for (let i = 0; i < 40; i++) {
      tries.push(shared.acquire({ key: `${key}:many:${i}`, owner: 'm', ttl: 10_000, wait: false }));
      lengths.push(socket.writableLength);
    }
    expect(lengths[0]).toBe(0); // the first call of the burst is written at once
    expect(lengths[14]).toBeGreaterThan(lengths[1]!); // held back and growing
    expect(lengths[16]).toBeLessThan(lengths[14]!); // 16 calls held back: they left
    expect(lengths[39]).toBeLessThan(lengths[30]!);
    expect(await Promise.all(tries)).toHaveLength(40);
  }));

test('coalesce(): the calls made inside leave in one write when it returns, also when a busy turn would send its held calls in between', () =>
  onAppClient(async (client, shared, socket) => {
    const key = unique('coalesce');
    expect(await shared.acquire({ key, owner: 'a', ttl: 10_000, wait: false })).not.toBeNull();
    let corkedInside = -1;
    const [released, next] = shared.coalesce(() => {
      const r = shared.release(key, 'a');
      const n = shared.acquire({ key, owner: 'b', ttl: 10_000, wait: true });
      corkedInside = socket.writableCorked;
      return [r, n] as const;
    });
    expect(corkedInside).toBe(1);
    expect(socket.writableCorked).toBe(0);
    expect(await released).toBe(true);
    expect(await next).not.toBeNull();
    expect(await client.get(`{${key}}`)).toBe('b');

    // A busy turn: one call written at once, 15 held back; the next held call would be the 16th, which sends them.
    const tries = Array.from({ length: 16 }, (_, i) =>
      shared.acquire({ key: `${key}:busy:${i}`, owner: 'm', ttl: 10_000, wait: false }),
    );
    let heldAfterRelease = 0;
    const [again, third] = shared.coalesce(() => {
      const r = shared.release(key, 'b');
      heldAfterRelease = socket.writableLength; // still held: the release waits for the queueing call
      return [r, shared.acquire({ key, owner: 'c', ttl: 10_000, wait: true })] as const;
    });
    expect(heldAfterRelease).toBeGreaterThan(0);
    expect(await again).toBe(true);
    expect(await third).not.toBeNull();
    expect(await Promise.all(tries)).toHaveLength(16);
    expect(await shared.release(key, 'c')).toBe(true);
  }));

/** A proxy to the test Redis that holds its replies back by `delay` ms. */
async function slowRedis(delay: number): Promise<{ url: string; close: () => Promise<void> }> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => setTimeout(() => client.writable && client.write(d), delay));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a wait whose first call is slow (replies held back 500 ms)', () => {
  let slow: Awaited<ReturnType<typeof slowRedis>>;
  let p: RedisLockProvider;
  beforeAll(async () => {
    slow = await slowRedis(500);
    p = new RedisLockProvider({ redis: slow.url });
    // A wait behind another holder, so that p is subscribed to hand-off notices (its first queueing wait subscribes).
    const warm = unique('warm');
    await provider.acquire({ key: warm, owner: 'holder', ttl: 10_000, wait: false });
    const waiting = p.acquire({ key: warm, owner: 'warm', ttl: 10_000, wait: true });
    await sleep(2_500);
    await provider.release(warm, 'holder');
    expect(await waiting).not.toBeNull();
    await p.release(warm, 'warm');
  }, 15_000);
  afterAll(async () => {
    await p.close();
    await slow.close();
  });
  /** Until the key is free (the released key of a wait that gave up), at most 3 s. */
  async function freed(key: string): Promise<number> {
    const by = Date.now() + 3_000;
    while ((await redis.exists(`{${key}}`)) === 1 && Date.now() < by) await sleep(20);
    return redis.exists(`{${key}}`);
  }

  test('aborted while the call is on the way: resolves null and gives the key back', async () => {
    const key = unique('abort-first');
    const ac = new AbortController();
    const waiting = p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, signal: ac.signal });
    await sleep(100);
    ac.abort();
    expect(await waiting).toBeNull();
    // The call went through (the key was free); the key is released behind it.
    expect(await freed(key)).toBe(0);
  });

  test('the first queueing wait of a provider counts the time it takes to subscribe against its waitTimeout', async () => {
    const slower = await slowRedis(400);
    const fresh = new RedisLockProvider({ redis: slower.url, commandTimeout: 4_000 });
    const key = unique('subscribe-time');
    try {
      await fresh.ping();
      await provider.acquire({ key, owner: 'holder', ttl: 20_000, wait: false });
      // subscribing takes about 1 s (connect, SUBSCRIBE through the proxy), then the wait queues for the rest of the 2.5 s
      const started = Date.now();
      expect(await fresh.acquire({ key, owner: 'w', ttl: 10_000, wait: true, waitTimeout: 2_500 })).toBeNull();
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(2_400);
      expect(elapsed).toBeLessThan(3_100); // not 1 s + 2.5 s
    } finally {
      await provider.release(key, 'holder');
      await fresh.close();
      await slower.close();
    }
  }, 15_000);

  test('a waitTimeout shorter than commandTimeout still ends the wait on time', async () => {
    const key = unique('short-wait');
    const started = Date.now();
    expect(await p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, waitTimeout: 100 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(450); // not the 500 ms of a call
    expect(await freed(key)).toBe(0);
  });

  test("a wait that timed out with its queueing call in flight is out of the way of the same provider's next call", async () => {
    const key = unique('left-in-flight');
    await provider.acquire({ key, owner: 'holder', ttl: 30_000, wait: false });
    // The queueing call reaches Redis at once; its reply comes 500 ms later, long after the 100 ms wait ended.
    expect(await p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, waitTimeout: 100 })).toBeNull();
    expect(await provider.release(key, 'holder')).toBe(true);
    // Sent after the wait ended: it must not find the key handed to the waiter that left.
    const tried = await p.acquire({ key, owner: 'next', ttl: 30_000, wait: false });
    expect(tried).not.toBeNull();
    await p.release(key, 'next');
  });
});

test('scripts still run after SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
  const server = await RedisServer.start();
  const p = new RedisLockProvider({ redis: server.url });
  try {
    expect(await p.acquire({ key: 'k', owner: 'a', ttl: 5_000, wait: false })).not.toBeNull();
    const admin = new Redis(server.url);
    await admin.script('FLUSH');
    await admin.quit();
    expect(await p.extend('k', 'a', 5_000)).toBe(true);
    expect(await p.release('k', 'a')).toBe(true);
    expect(await p.acquire({ key: 'k', owner: 'b', ttl: 5_000, wait: false })).not.toBeNull();
  } finally {
    await p.close();
    await server.stop();
  }
});

describe('calls are bounded by commandTimeout', () => {
  const commandTimeout = 300;
  const bound = commandTimeout + 700;
  let silent: Server;
  let silentPort: number;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    silent = createServer((s) => sockets.add(s)); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    silentPort = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  async function expectBounded(p: RedisLockProvider): Promise<LockStoreError[]> {
    const errors: LockStoreError[] = [];
    const calls = [
      () => p.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false }),
      () => p.acquire({ key: 'k', owner: 'b', ttl: 1_000, wait: true, waitTimeout: 10_000 }),
      () => p.extend('k', 'a', 1_000),
      () => p.release('k', 'a'),
      () => p.ping(),
    ];
    for (const call of calls) {
      const started = Date.now();
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LockStoreError);
      expect(Date.now() - started).toBeLessThan(bound);
      errors.push(error as LockStoreError);
    }
    return errors;
  }

  test('a refused connection: LockStoreError, and no password or URL in the message', async () => {
    const port = await freePort();
    const p = new RedisLockProvider({ redis: `redis://:s3cret-pw@127.0.0.1:${port}/0`, commandTimeout });
    try {
      for (const error of await expectBounded(p)) {
        expect(error.message).not.toContain('s3cret-pw');
        expect(error.message).not.toContain('redis://');
      }
    } finally {
      await p.close();
    }
  });

  test('a server that accepts and never answers, through a connection the provider opened', async () => {
    const p = new RedisLockProvider({ redis: { host: '127.0.0.1', port: silentPort }, commandTimeout });
    try {
      await expectBounded(p);
    } finally {
      await p.close();
    }
  });

  test('a server that never answers, through a client passed in (with its offline queue on)', async () => {
    const mine = new Redis({ host: '127.0.0.1', port: silentPort, lazyConnect: true });
    mine.on('error', () => {});
    const p = new RedisLockProvider({ redis: mine, commandTimeout });
    try {
      await expectBounded(p);
    } finally {
      await p.close();
      mine.disconnect();
    }
  });
});

test('close(): waiters resolve null and leave the queue; later calls fail with LockStoreError', async () => {
  const key = unique('close');
  const p = new RedisLockProvider({ redis: url });
  await provider.acquire({ key, owner: 'holder', ttl: 10_000, wait: false });
  const waiting = p.acquire({ key, owner: 'w', ttl: 10_000, wait: true });
  while ((await redis.llen(`{${key}}:q`)) === 0) await sleep(10);
  await p.close();
  expect(await waiting).toBeNull();
  expect(await redis.llen(`{${key}}:q`)).toBe(0);
  await expect(p.acquire({ key, owner: 'x', ttl: 1_000, wait: false })).rejects.toBeInstanceOf(LockStoreError);
  expect((p.client as Redis).status).toBe('end');
  await provider.release(key, 'holder');
});

test('a waiter that gives up as it is granted passes the key on, and never keeps it', async () => {
  // The waiter is told of its grant in the release reply (same instance) or by PUBLISH (another instance).
  const other = new RedisLockProvider({ redis: url });
  try {
    for (let i = 0; i < 8; i++) {
      const key = unique('race');
      const waiterSide = i % 4 < 2 ? provider : other;
      await provider.acquire({ key, owner: 'holder', ttl: 10_000, wait: false });
      const ac = new AbortController();
      const first = waiterSide.acquire({ key, owner: 'first', ttl: 10_000, wait: true, signal: ac.signal });
      while ((await redis.llen(`{${key}}:q`)) < 1) await sleep(5);
      const second = provider.acquire({ key, owner: 'second', ttl: 10_000, wait: true, waitTimeout: 10_000 });
      while ((await redis.llen(`{${key}}:q`)) < 2) await sleep(5);
      const released = provider.release(key, 'holder');
      if (i % 2) await released;
      ac.abort();
      const got = await first;
      if (got === null) {
        // Gave up first: it must not hold the key, and the next waiter gets it.
        expect(await waiterSide.extend(key, 'first', 1_000)).toBe(false);
      } else {
        // The grant arrived before the abort: the wait was over, the key is its own until released.
        expect(await redis.get(`{${key}}`)).toBe('first');
        expect(await waiterSide.release(key, 'first')).toBe(true);
      }
      expect(await second).not.toBeNull();
      expect(await provider.release(key, 'second')).toBe(true);
    }
  } finally {
    await other.close();
  }
});

test('a queue entry whose process died (deadline passed) is skipped at once', async () => {
  const key = unique('ghost');
  await provider.acquire({ key, owner: 'holder', ttl: 10_000, wait: false });
  await redis.rpush(`{${key}}:q`, 'ghost');
  await redis.hset(`{${key}}:w`, 'ghost', `${Date.now() - 1_000} 30000 ghost-instance`);
  const waiting = provider.acquire({ key, owner: 'live', ttl: 10_000, wait: true, waitTimeout: 5_000 });
  while ((await redis.llen(`{${key}}:q`)) < 2) await sleep(5);
  const started = Date.now();
  await provider.release(key, 'holder');
  expect(await waiting).not.toBeNull();
  expect(Date.now() - started).toBeLessThan(1_000);
  await provider.release(key, 'live');
});

test('a contended section costs at most 5 Redis commands (about 2: queue, release), and only the waiting process is woken', async () => {
  const server = await RedisServer.start();
  let queued = 0;
  const onEvent = (e: { type: string }) => {
    if (e.type === 'contended') queued++;
  };
  const managers = [0, 1].map(
    () => new LockManager({ provider: new RedisLockProvider({ redis: server.url }), onEvent }),
  );
  const admin = new Redis(server.url);
  try {
    await Promise.all(managers.map((m) => m.provider.ping()));
    await admin.config('RESETSTAT');
    const sections = 200;
    await Promise.all(
      managers.flatMap((m) =>
        [0, 1].map(async () => {
          for (let i = 0; i < sections / 4; i++) {
            await m.withLock('cost', () => sleep(1), { onHeld: 'wait', waitTimeout: 20_000 });
          }
        }),
      ),
    );
    const stats = await admin.info('commandstats');
    const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    const scripts = calls('evalsha') + calls('eval');
    expect(queued).toBeGreaterThan(sections / 2); // most sections were handed over from a waiter's queue
    expect(scripts / sections).toBeLessThanOrEqual(5);
    // A hand-off to the releasing process's own waiter needs no notice; one to the other process, one PUBLISH.
    const publishes = calls('publish');
    expect(publishes).toBeGreaterThan(0);
    expect(publishes).toBeLessThan(queued);
    const channels = await admin.pubsub(
      'NUMSUB',
      ...managers.map((m) => `nest-lock:grants:${(m.provider as unknown as { instance: string }).instance}`),
    );
    expect(channels).toEqual([expect.any(String), 1, expect.any(String), 1]);
  } finally {
    for (const m of managers) await m.provider.close();
    await admin.quit();
    await server.stop();
  }
});

test('a hand-off between two processes costs Redis 19 commands, calls inside scripts included: 8 to queue, 11 to release and grant', async () => {
  const server = await RedisServer.start();
  // Strict FIFO between two providers, one caller each: every section after the first is handed over by the other's release.
  const managers = [0, 1].map(
    () => new LockManager({ provider: new RedisLockProvider({ redis: server.url }), localHandOff: false }),
  );
  const admin = new Redis(server.url);
  const run = (rounds: number) =>
    Promise.all(
      managers.map(async (m) => {
        for (let i = 0; i < rounds; i++)
          await m.withLock('budget', () => sleep(2), { onHeld: 'wait', waitTimeout: 20_000 });
      }),
    );
  try {
    await run(5); // both providers have now seen the key contended
    await admin.config('RESETSTAT');
    const rounds = 50;
    await run(rounds);
    const stats = await admin.info('commandstats');
    const calls = new Map([...stats.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
    const lock = [...calls]
      .filter(([cmd]) => !['info', 'config|resetstat', 'config'].includes(cmd))
      .reduce((n, [, c]) => n + c, 0);
    const sections = 2 * rounds;
    // Per hand-off: the queueing call (EVALSHA, GET, RPUSH, HSET, 2 PEXPIRE, TIME, PTTL) and the release
    // (EVALSHA, GET, LPOP, HGET, TIME, HDEL, the fencing counter: GET + SET, or SET ... GET, SET, PUBLISH).
    expect(lock / sections).toBeLessThanOrEqual(19.5);
    expect(lock / sections).toBeGreaterThan(15);
    // The queue is not probed per hand-off (only when the key was found free, at the start of the run).
    expect(calls.get('exists') ?? 0).toBeLessThan(rounds / 10);
  } finally {
    for (const m of managers) await m.provider.close();
    await admin.quit();
    await server.stop();
  }
});

test('invalid options fail with LockOptionsError', () => {
  expect(() => new RedisLockProvider({ redis: 42 as never })).toThrow(LockOptionsError);
  expect(() => new RedisLockProvider({ redis: url, commandTimeout: 0 })).toThrow(LockOptionsError);
  expect(() => new RedisLockProvider({ redis: url, waiterLease: -1 })).toThrow(LockOptionsError);
  expect(() => new RedisLockProvider(undefined as never)).toThrow(LockOptionsError);
});

test('LockModule.forRootAsync({ useFactory: () => ({ redis, commandTimeout }) }) builds a RedisLockProvider and closes it', async () => {
  @Module({ imports: [LockModule.forRootAsync({ useFactory: () => ({ redis: url, commandTimeout: 1_000 }) })] })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = await moduleRef.init();
  const p = app.get(LockProvider) as RedisLockProvider;
  expect(p).toBeInstanceOf(RedisLockProvider);
  expect(await p.ping()).toBeGreaterThanOrEqual(0);
  await app.close();
  expect((p.client as Redis).status).toBe('end');
});

test('the in-memory default does not load ioredis; configuring redis does', async () => {
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const loaded = () => Object.keys(require.cache).some((k) => k.includes('/ioredis/'));
    const lib = await import(${JSON.stringify(new URL('../../../dist/lib/index.js', import.meta.url).pathname)});
    const memory = await lib.createLockProvider({});
    const before = loaded();
    const redis = await lib.createLockProvider({ redis: ${JSON.stringify(url)} });
    console.log(JSON.stringify({ before, after: loaded(), kinds: [memory.kind, redis.kind] }));
    await redis.close();
  `;
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], (err, stdout, stderr) =>
      err ? reject(new Error(stderr)) : resolve(stdout),
    ),
  );
  expect(JSON.parse(out)).toEqual({ before: false, after: true, kinds: ['memory', 'redis'] });
});
