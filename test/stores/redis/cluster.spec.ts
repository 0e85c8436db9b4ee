/**
 * Redis Cluster: the conformance suite on a local 3-master cluster this test
 * starts (through an ioredis Cluster, an iovalkey Cluster and a node-redis
 * createCluster()), plus lock keys of many names spread over the masters.
 */
import { Cluster } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { createClient, createCluster } from 'redis';
import { LockManager, LockStoreError } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { pausedHolderOn } from '../../contract/paused-holder-process.js';
import { RedisCluster } from '../../support/redis-server.js';
import { closedClusterError } from '../../support/closed-cluster-error.js';
import { redisLeftovers } from '../../support/redis-leftovers.js';
import { FENCE_GRACE_MS } from '../../../lib/stores/redis/redis-lock.scripts.js';

let cluster: RedisCluster | undefined;
let client: Cluster | undefined;

async function connect(): Promise<Cluster> {
  cluster ??= await RedisCluster.start();
  client ??= new Cluster(cluster.startupNodes);
  await client.ping();
  return client;
}

let nodeCluster: ReturnType<typeof createCluster> | undefined;
let valkeyCluster: ValkeyCluster | undefined;

afterAll(async () => {
  await valkeyCluster?.quit();
  await nodeCluster?.close();
  await client?.quit();
  await cluster?.stop();
});

describeLockProviderConformance(
  'RedisLockProvider on a 3-master Redis Cluster',
  async () => {
    const c = await connect();
    return {
      provider: new RedisLockProvider({ redis: c }),
      releaseWindowMs: FENCE_GRACE_MS,
      leftovers: (key) => redisLeftovers(c, key),
    };
  },
  { describe, it, beforeAll, afterAll },
  // The cluster's nodes are known once the factory has started it.
  {
    pausedHolder: {
      spawn: (argument) => pausedHolderOn({ kind: 'redis-cluster', nodes: cluster!.startupNodes }).spawn(argument),
    },
  },
);

describeLockProviderConformance(
  'RedisLockProvider on a 3-master Redis Cluster through node-redis createCluster()',
  async () => {
    const c = await connect();
    nodeCluster ??= createCluster({
      rootNodes: cluster!.startupNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
    }).on('error', () => {});
    return {
      provider: new RedisLockProvider({ redis: nodeCluster }),
      releaseWindowMs: FENCE_GRACE_MS,
      leftovers: (key) => redisLeftovers(c, key),
    };
  },
  { describe, it, beforeAll, afterAll },
  {
    pausedHolder: {
      spawn: (argument) => pausedHolderOn({ kind: 'redis-cluster', nodes: cluster!.startupNodes }).spawn(argument),
    },
  },
);

describeLockProviderConformance(
  'RedisLockProvider on a 3-master Redis Cluster through an iovalkey Cluster',
  async () => {
    const c = await connect();
    valkeyCluster ??= new ValkeyCluster(cluster!.startupNodes);
    return {
      provider: new RedisLockProvider({ redis: valkeyCluster }),
      releaseWindowMs: FENCE_GRACE_MS,
      leftovers: (key) => redisLeftovers(c, key),
    };
  },
  { describe, it, beforeAll, afterAll },
  {
    pausedHolder: {
      spawn: (argument) => pausedHolderOn({ kind: 'redis-cluster', nodes: cluster!.startupNodes }).spawn(argument),
    },
  },
);

describe('RedisLockProvider on a Redis Cluster', () => {
  test('locks of names in different slots work, with hand-off across two providers; the passed-in client stays open', async () => {
    const c = await connect();
    const a = new LockManager({ provider: new RedisLockProvider({ redis: c }) });
    const other = c.duplicate();
    const b = new LockManager({ provider: new RedisLockProvider({ redis: other }) });
    const names = Array.from({ length: 12 }, (_, i) => `cluster-${i}`);
    // The names spread over more than one master (slot ranges 0-5460, 5461-10922, 10923-16383).
    const masters = new Set<number>();
    for (const name of names) masters.add(Math.floor(Number(await c.cluster('KEYSLOT', `{lock:${name}}`)) / 5461));
    expect(masters.size).toBeGreaterThan(1);
    for (const name of names) {
      const held = await a.acquire(name, { ttl: 10_000 });
      const waiting = b.acquire(name, { ttl: 10_000, waitTimeout: 5_000 });
      await new Promise((r) => setTimeout(r, 20));
      const releasedAt = Date.now();
      await held.release();
      const next = await waiting;
      expect(Date.now() - releasedAt).toBeLessThan(1_000);
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      await next.release();
    }
    await a.provider.close();
    await b.provider.close();
    expect(c.status).toBe('ready');
    expect(other.status).toBe('ready');
    await other.quit();
  });

  test('a node-redis createCluster() the app closed: a LockStoreError naming the Cluster address', async () => {
    await connect();
    const v5 = createCluster({
      rootNodes: cluster!.startupNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
    }).on('error', () => {});
    const error = await closedClusterError(v5, 'cluster-v5');
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toContain(`Redis at 127.0.0.1:${cluster!.nodes[0].port}, `);
    expect((error as Error).message).toMatch(/\(Cluster\) failed \(the connection was closed\)/);
  });

  test('a node-redis createClient() (not createCluster()) on one node: keys of the other masters fail with a LockStoreError naming MOVED', async () => {
    await connect();
    const single = createClient({ url: `redis://127.0.0.1:${cluster!.nodes[0].port}` }).on('error', () => {});
    const provider = new RedisLockProvider({ redis: single, commandTimeout: 1_000 });
    try {
      const errors: unknown[] = [];
      let granted = 0;
      // 12 names: some on this node's slots, most on the other two masters'.
      for (let i = 0; i < 12; i++) {
        try {
          if (await provider.acquire({ key: `moved-${i}`, owner: 'a', ttl: 2_000, wait: false })) granted += 1;
        } catch (err) {
          errors.push(err);
        }
      }
      expect(granted).toBeGreaterThan(0);
      expect(errors.length).toBeGreaterThan(0);
      for (const err of errors) {
        expect(err).toBeInstanceOf(LockStoreError);
        expect((err as Error).message).toMatch(/MOVED \d+ 127\.0\.0\.1:\d+/);
      }
    } finally {
      await provider.close();
      single.destroy();
    }
  });
});
