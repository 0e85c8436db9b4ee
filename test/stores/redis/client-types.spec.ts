/**
 * What `redis` accepts: a URL, a plain object of ioredis options, an
 * ioredis (or iovalkey) `Redis` / `Cluster` instance, or a node-redis
 * `createClient()` / `createCluster()` / `createSentinel()` client; each runs
 * real lock cycles on the server it points at (a private one, database 5;
 * Sentinel: node-redis-sentinel.spec.ts). Anything else (a node-redis pool, a Map, a class instance, a Promise, a pg.Pool,
 * an object with client methods) is refused at forRoot, at boot with
 * forRootAsync and in `new RedisLockProvider()`, with a LockOptionsError
 * naming what was passed and what is accepted: ioredis would read it as
 * options and take the locks on 127.0.0.1:6379 instead.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { jest } from '@jest/globals';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Cluster, Redis } from 'ioredis';
import { Cluster as ValkeyCluster, Redis as ValkeyRedis } from 'iovalkey';
import pg from 'pg';
import { createClient, createClientPool, createCluster, createSentinel } from 'redis';
import { LockModule, LockOptionsError } from '../../../lib/index.js';
import { RedisLockProvider, type RedisLockProviderOptions } from '../../../lib/stores/redis/index.js';
import { bootLockApp } from '../../support/boot-lock-app.js';
import { freePort } from '../../support/free-port.js';
import { RedisCluster, RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

type RedisOption = RedisLockProviderOptions['redis'];
const unique = (what: string) => `client-types:${what}:${randomBytes(6).toString('hex')}`;

const ACCEPTED =
  /a redis:\/\/ or rediss:\/\/ URL, a plain object of ioredis options \(such as \{ host, port, db \} or \{ sentinels, name \}\), an ioredis or iovalkey Redis or Cluster instance, or a node-redis client \(createClient\(\), createCluster\(\) or createSentinel\(\)\)/;

/** What `where` throws, or `undefined`. */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** The error with which a forRootAsync boot with `redis` fails, or `undefined` when it boots. */
async function bootError(redis: unknown): Promise<unknown> {
  @Module({ imports: [LockModule.forRootAsync({ useFactory: () => ({ redis: redis as RedisOption }) })] })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }).then(
    async (app) => {
      await app.close();
      return undefined;
    },
    (err: unknown) => err,
  );
}

/** Expects `redis` refused on all three paths with a LockOptionsError whose message matches `named` (and names what is accepted). */
async function expectRefused(redis: unknown, named: RegExp): Promise<void> {
  for (const [where, error] of [
    ['LockModule options', thrown(() => LockModule.forRoot({ redis: redis as RedisOption }))],
    ['RedisLockProvider', thrown(() => new RedisLockProvider({ redis: redis as RedisOption }))],
    ['LockModule options', await bootError(redis)],
  ] as const) {
    expect(error).toBeInstanceOf(LockOptionsError);
    const message = (error as Error).message;
    expect(message.startsWith(`${where}: `)).toBe(true);
    expect(message).toMatch(named);
    expect(message).toMatch(ACCEPTED);
  }
}

describe('redis: anything but a URL, ioredis options or a supported client is refused before any connection', () => {
  // Pointed at a port where nothing listens: before the check, locks were granted anyway (on 127.0.0.1:6379).
  let nowhere: string;
  beforeAll(async () => {
    nowhere = `redis://127.0.0.1:${await freePort()}/5`;
  });

  test('a node-redis v5 createClientPool(): named as such, with what to pass instead', async () => {
    const taken =
      /which the Redis store does not take \(read as ioredis options, it would connect to 127\.0\.0\.1:6379 instead\)\. Pass /;
    await expectRefused(createClientPool({ url: nowhere }), /redis is a node-redis RedisClientPool /);
    await expectRefused(createClientPool({ url: nowhere }), taken);
  });

  test('a node-redis createSentinel() client is taken (type and check; its lock cycles: node-redis-sentinel.spec.ts)', async () => {
    const sentinel = createSentinel({
      name: 'mymaster',
      sentinelRootNodes: [{ host: '127.0.0.1', port: await freePort() }],
    });
    const redis: RedisOption = sentinel;
    expect(() => LockModule.forRoot({ redis })).not.toThrow();
    const provider = new RedisLockProvider({ redis });
    await provider.close();
    expect(sentinel.isOpen).toBe(false); // not opened by construction or close
  });

  test('wrong objects: named by their class, with what is accepted', async () => {
    class RedisConfig {
      host = '127.0.0.1';
      port = 6380;
    }
    await expectRefused(
      new Map([['host', 'cache']]),
      /got an instance of Map\. Other objects are refused, not read as options/,
    );
    await expectRefused(
      new RedisConfig(),
      /got an instance of RedisConfig\. .*pass a plain copy \(\{ \.\.\.options \}\)/,
    );
    await expectRefused(new (class {})(), /got an instance of an anonymous class\./);
    await expectRefused(new Date(0), /got an instance of Date\./);
    await expectRefused({ host: 'cache', connect: async () => undefined }, /got an object with a connect\(\) method\./);
    await expectRefused({ get: () => null, set: () => 'OK' }, /got an object with a get\(\) method\./);
    await expectRefused([{ host: 'cache' }], /got an array\./);
    for (const value of [42, true, null] as const) await expectRefused(value, new RegExp(`got ${String(value)}\\.`));

    const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
    try {
      await expectRefused(pool, /got an instance of BoundPool\./);
    } finally {
      await pool.end();
    }

    const ioredis = new Redis({ lazyConnect: true });
    try {
      await expectRefused(Promise.resolve(ioredis), /got a Promise \(await the client, then pass it\)\./);
      // @ts-expect-error a Promise of a client is not a client
      expect(() => new RedisLockProvider({ redis: Promise.resolve(ioredis) })).toThrow(LockOptionsError);
    } finally {
      ioredis.disconnect();
    }
    // @ts-expect-error a Map is not ioredis options
    expect(() => LockModule.forRoot({ redis: new Map() })).toThrow(LockOptionsError);
    // @ts-expect-error nor is a pg.Pool
    expect(() => new RedisLockProvider({ redis: new pg.Pool() })).toThrow(/BoundPool/);
  });
});

test('options objects with keys ioredis does not read (Cluster nodes, node-redis options) are refused with what to pass instead', async () => {
  const port = await freePort(); // nothing listens: before the check, these locks were taken on 127.0.0.1:6379
  for (const [options, instead] of [
    [
      { nodes: [{ host: '127.0.0.1', port }] },
      /redis\.nodes is not an ioredis option: .* Pass an ioredis Cluster instance \(new Cluster\(nodes, options\)\)/,
    ],
    [
      { startupNodes: [{ host: '127.0.0.1', port }] },
      /redis\.startupNodes is not an ioredis option: .* Pass an ioredis Cluster instance/,
    ],
    [
      { rootNodes: [{ url: `redis://127.0.0.1:${port}` }] },
      /redis\.rootNodes is not an ioredis option: .*node-redis createCluster\(\) options/,
    ],
    [
      { url: `redis://127.0.0.1:${port}/5` },
      /redis\.url is not an ioredis option: .* Pass the URL itself as redis \(a string\)/,
    ],
    [
      { socket: { host: '127.0.0.1', port } },
      /redis\.socket is not an ioredis option: .* Pass host, port \(and tls\) at the top level/,
    ],
    [
      { host: '127.0.0.1', port, database: 5 },
      /redis\.database is not an ioredis option: .* Pass db, the ioredis name of the database index/,
    ],
  ] as const) {
    for (const error of [
      thrown(() => LockModule.forRoot({ redis: options as RedisOption })),
      thrown(() => new RedisLockProvider({ redis: options as RedisOption })),
      await bootError(options),
    ]) {
      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as Error).message).toMatch(/ioredis would ignore it and connect to 127\.0\.0\.1:6379 instead/);
      expect((error as Error).message).toMatch(instead);
    }
  }
});

describe('redis: a URL, plain ioredis options, and ioredis or iovalkey clients work end to end where they point', () => {
  let server: RedisServer;
  let db5: Redis; // reads the private server's database 5
  beforeAll(async () => {
    server = await RedisServer.start();
    db5 = new Redis(`${server.url}/5`);
  });
  afterAll(async () => {
    await db5?.quit();
    await server?.stop();
  });

  /** A try, a wait handed over on release (pub/sub on the duplicated subscriber), an extend and a release, on two providers of `redis`. */
  async function lockCycle(redis: RedisOption, where: Redis | Cluster): Promise<void> {
    const a = new RedisLockProvider({ redis });
    const b = new RedisLockProvider({ redis });
    try {
      const key = unique('cycle');
      const first = await a.acquire({ key, owner: 'a', ttl: 30_000, wait: false });
      expect(first).not.toBeNull();
      expect(await where.get(`{${key}}`)).toBe('a'); // on the server the client points at
      const waiting = b.acquire({ key, owner: 'b', ttl: 30_000, wait: true });
      while ((await where.llen(`{${key}}:q`)) === 0) await sleep(10);
      expect(await a.release(key, 'a')).toBe(true);
      const second = await waiting;
      expect(second).not.toBeNull();
      expect(second!.fencingToken > first!.fencingToken).toBe(true);
      expect(await b.extend(key, 'b', 60_000)).toBe(true);
      expect(await where.pttl(`{${key}}`)).toBeGreaterThan(30_000);
      expect(await b.release(key, 'b')).toBe(true);
      expect(await where.exists(`{${key}}`)).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }

  test('a URL, plain options (also Object.create(null)), an ioredis Redis (also of another copy of ioredis) and an iovalkey Redis: locks land in database 5 of the server named', async () => {
    await lockCycle(`${server.url}/5`, db5);
    await lockCycle({ host: '127.0.0.1', port: server.port, db: 5 }, db5);
    await lockCycle(Object.assign(Object.create(null) as object, { host: '127.0.0.1', port: server.port, db: 5 }), db5);
    const ioredis = new Redis(`${server.url}/5`);
    const valkey = new ValkeyRedis(`${server.url}/5`);
    // Another copy of ioredis (loaded again, in a module registry of its own): other classes, same shape.
    let Another: typeof Redis = Redis;
    jest.isolateModules(() => {
      Another = (createRequire(import.meta.url)('ioredis') as typeof import('ioredis')).Redis;
    });
    expect(Another).not.toBe(Redis);
    const another = new Another(`${server.url}/5`);
    try {
      await lockCycle(ioredis, db5);
      await lockCycle(another, db5);
      // iovalkey (the Valkey fork of ioredis) has ioredis' shape and works as one.
      await lockCycle(valkey, db5);
      expect([ioredis.status, another.status, valkey.status]).toEqual(['ready', 'ready', 'ready']); // a client you pass stays open
    } finally {
      ioredis.disconnect();
      another.disconnect();
      valkey.disconnect();
    }
  });

  test('a node-redis createClient(), not connected yet, connected, and speaking RESP3: locks land in database 5; the client stays open', async () => {
    const lazy = createClient({ url: `${server.url}/5` });
    const open = createClient({ url: `${server.url}/5` });
    const resp3 = createClient({ url: `${server.url}/5`, RESP: 3 });
    for (const client of [lazy, open, resp3]) client.on('error', () => {});
    try {
      await open.connect();
      await resp3.connect();
      await lockCycle(lazy, db5); // opened by the first call
      await lockCycle(open, db5);
      await lockCycle(resp3, db5);
      expect([lazy.isReady, open.isReady, resp3.isReady]).toEqual([true, true, true]); // a client you pass stays open
    } finally {
      await Promise.all([lazy, open, resp3].map((c) => c.close()));
    }
  });

  test('the types: ioredis, iovalkey and node-redis clients are each a redis option; other objects are not', () => {
    const options: RedisOption[] = [
      new Redis({ lazyConnect: true }),
      new ValkeyRedis({ lazyConnect: true }),
      createClient(),
      createClient({ RESP: 3 }),
      createCluster({ rootNodes: [] }),
      { host: '127.0.0.1', port: 6379 },
      'redis://127.0.0.1:6379',
    ];
    expect(options).toHaveLength(7);
    (options[0] as Redis).disconnect();
    (options[1] as ValkeyRedis).disconnect();
    // @ts-expect-error a node-redis pool is not a client the store takes
    const pool: RedisOption = createClientPool();
    // @ts-expect-error nor a Map
    const map: RedisOption = new Map();
    expect([pool, map]).toHaveLength(2);
  });

  test('LockModule.forRoot with a node-redis client: a lock taken through the module lands in database 5', async () => {
    const client = createClient({ url: `${server.url}/5` });
    client.on('error', () => {});
    try {
      const { app, locks } = await bootLockApp({ redis: client });
      try {
        const key = unique('module-node-redis');
        expect(await locks.withLock(key, async () => db5.get(`{lock:${key}}`))).not.toBeNull();
      } finally {
        await app.close();
      }
      expect(client.isOpen).toBe(true);
    } finally {
      await client.close();
    }
  });

  test('LockModule.forRoot and forRootAsync with an iovalkey Redis: a lock taken through the module lands in database 5', async () => {
    const valkey = new ValkeyRedis(`${server.url}/5`);
    try {
      const { app, locks } = await bootLockApp({ redis: valkey });
      try {
        const key = unique('module');
        expect(await locks.withLock(key, async () => db5.get(`{lock:${key}}`))).not.toBeNull();
      } finally {
        await app.close();
      }
      expect(await bootError(valkey)).toBeUndefined();
    } finally {
      valkey.disconnect();
    }
  });

  test('an ioredis and an iovalkey Cluster on a 3-master cluster', async () => {
    const cluster = await RedisCluster.start();
    const ioredis = new Cluster(cluster.startupNodes);
    const valkey = new ValkeyCluster(cluster.startupNodes);
    try {
      await ioredis.ping();
      await lockCycle(ioredis, ioredis);
      await lockCycle(valkey, ioredis);
      // node-redis createCluster(): scripts routed by their first key, pub/sub on a duplicate.
      const nodeCluster = createCluster({
        rootNodes: cluster.startupNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
      });
      nodeCluster.on('error', () => {});
      await lockCycle(nodeCluster, ioredis);
      expect(nodeCluster.isOpen).toBe(true); // opened by the first call, left open
      await nodeCluster.close();
    } finally {
      ioredis.disconnect();
      valkey.disconnect();
      await cluster.stop();
    }
  }, 60_000);
});
