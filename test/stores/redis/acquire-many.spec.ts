/**
 * Several names at once on Redis (`acquireMany`): free names are taken by
 * one script (`acquire-many.lua`) on a standalone Redis; on a Cluster by one
 * script per hash slot, in order, the earlier slots given back when a later
 * one is refused. Script calls are counted with INFO commandstats on servers
 * this test starts (nobody else's calls in them).
 */
import { Cluster, Redis } from 'ioredis';
import { LockManager, LockStoreError } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { REPLICATION_FAST, RedisCluster, RedisServer } from '../../support/redis-server.js';

/** EVALSHA and EVAL calls a server ran so far. */
async function scriptCalls(admin: Redis): Promise<number> {
  const info = await admin.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) calls += Number(m[1]);
  return calls;
}

describe('on a standalone Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  const managers: LockManager[] = [];
  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    for (const m of managers) await m.provider.close();
    await admin.quit();
    await server.stop();
  });
  const manager = (): LockManager => {
    const m = new LockManager({ provider: new RedisLockProvider({ redis: server.url }) });
    managers.push(m);
    return m;
  };

  test('free names are taken by one script call; each is then a lock of its own (released one script each)', async () => {
    const m = manager();
    await m.withLock(['warm:1', 'warm:2'], () => 1); // (loads the script into the server's cache)
    const before = await scriptCalls(admin);
    let during = -1;
    const tokens = await m.withLock(['d', 'b', 'a', 'c'], async (lock) => {
      during = (await scriptCalls(admin)) - before;
      for (const n of lock.names) expect(await admin.exists(`{lock:${n}}`)).toBe(1);
      return lock.fencingTokens;
    });
    expect(during).toBe(1);
    expect((await scriptCalls(admin)) - before).toBe(5);
    for (const n of ['a', 'b', 'c', 'd']) expect(await admin.exists(`{lock:${n}}`)).toBe(0);
    // A later grant of a name draws above the batch's block.
    const single = await m.acquire('c');
    expect(single.fencingToken).toBeGreaterThan(tokens!.c);
    await single.release();
  });

  test('one name held elsewhere: the script takes none, the names are then taken one by one (waiting for the held one)', async () => {
    const m = manager();
    const other = manager();
    const held = await other.acquire('q:2');
    const taking = m.acquire(['q:1', 'q:2', 'q:3'], { waitTimeout: 10_000 });
    while ((await admin.llen('{lock:q:2}:q')) === 0) await new Promise((r) => setTimeout(r, 10));
    expect(await admin.exists('{lock:q:1}')).toBe(1);
    expect(await admin.exists('{lock:q:3}')).toBe(0);
    await held.release();
    const lock = await taking;
    expect(lock.fencingTokens['q:2']).toBeGreaterThan(held.fencingToken);
    await lock.release();
  });
});

describe('on a 3-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let admins: Redis[];
  beforeAll(async () => {
    cluster = await RedisCluster.start();
    client = new Cluster(cluster.startupNodes);
    admins = cluster.nodes.map((n) => new Redis(n.url));
  });
  afterAll(async () => {
    await client.quit();
    for (const a of admins) await a.quit();
    await cluster.stop();
  });
  const allScriptCalls = async (): Promise<number> =>
    (await Promise.all(admins.map(scriptCalls))).reduce((a, b) => a + b, 0);
  const slot = async (name: string): Promise<number> => Number(await client.cluster('KEYSLOT', `{lock:${name}}`));

  test('names are grouped by slot: one script per slot, in order; a refused later slot gives the earlier ones back', async () => {
    // "{t}a" and "{t}b" share a hash tag ("lock:{t"), so a slot; "z" is elsewhere.
    expect(await slot('{t}a')).toBe(await slot('{t}b'));
    expect(await slot('z')).not.toBe(await slot('{t}a'));
    const provider = new RedisLockProvider({ redis: client });
    const m = new LockManager({ provider });
    const names = ['z', '{t}b', '{t}a'];
    await m.withLock(names, () => 1); // (loads the script on the nodes)
    const before = await allScriptCalls();
    let during = -1;
    await m.withLock(names, async (lock) => {
      during = (await allScriptCalls()) - before;
      expect(lock.names).toEqual(['z', '{t}a', '{t}b'].sort());
      for (const n of names) expect(await client.exists(`{lock:${n}}`)).toBe(1);
    });
    expect(during).toBe(2);
    // z held by another owner: the slot of "{t}a" and "{t}b" (first in order) is taken, then given back.
    expect(await provider.acquire({ key: 'lock:z', owner: 'other', ttl: 10_000, wait: false })).not.toBeNull();
    const batch = ['lock:{t}a', 'lock:{t}b', 'lock:z'].map((key) => ({ key, owner: 'mine', ttl: 10_000 }));
    expect(await provider.acquireMany(batch)).toBeNull();
    for (const n of ['{t}a', '{t}b']) expect(await client.exists(`{lock:${n}}`)).toBe(0);
    expect(await provider.release('lock:z', 'other')).toBe(true);
    const grants = await provider.acquireMany(batch);
    expect(grants).toHaveLength(3);
    for (const { key } of batch) expect(await client.get(`{${key}}`)).toBe('mine');
    for (const { key } of batch) expect(await provider.release(key, 'mine')).toBe(true);
    await provider.close();
  });
});

describe('with waitForReplicas', () => {
  test('the grants count once the replica has them; with the replica stopped, LockStoreError and every name given back', async () => {
    const master = await RedisServer.start(REPLICATION_FAST);
    const replica = await RedisServer.startReplica(master);
    const provider = new RedisLockProvider({ redis: master.url, waitForReplicas: 1, commandTimeout: 4_000 });
    const batch = ['lock:r:1', 'lock:r:2'].map((key) => ({ key, owner: 'mine', ttl: 30_000 }));
    try {
      expect(await provider.acquireMany(batch)).toHaveLength(2);
      for (const { key } of batch) await replica.until((out) => out.trim() === 'mine', 'get', `{${key}}`);
      for (const { key } of batch) expect(await provider.release(key, 'mine')).toBe(true);
      replica.pause();
      try {
        await expect(provider.acquireMany(batch)).rejects.toBeInstanceOf(LockStoreError);
        for (const { key } of batch) await master.until((out) => out.trim() === '0', 'exists', `{${key}}`);
      } finally {
        replica.resume();
      }
    } finally {
      await provider.close();
      await replica.stop();
      await master.stop();
    }
  }, 60_000);
});
