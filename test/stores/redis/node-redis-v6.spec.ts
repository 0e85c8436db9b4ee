/**
 * The Redis store on node-redis v6 (`redis` 6, installed here as `redis6`):
 * the conformance suite on `createClient()` (RESP3), and on a 3-master
 * Cluster this test starts a `createCluster()` that locks (once its slot map
 * is known, not when its first node is ready) and, closed, fails with a
 * LockStoreError that names the Cluster's address.
 */
import { randomBytes } from 'node:crypto';
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { Redis } from 'ioredis';
import { createClient, createCluster } from 'redis6';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { LockManager, LockStoreError } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { pausedHolderOn } from '../../contract/paused-holder-process.js';
import { closedClusterError } from '../../support/closed-cluster-error.js';
import { redisClientsTarget } from '../../support/redis-conformance-target.js';
import { RedisCluster } from '../../support/redis-server.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const unique = (what: string) => `node-redis-v6:${what}:${randomBytes(6).toString('hex')}`;

describeLockProviderConformance(
  'RedisLockProvider on node-redis v6 clients (RESP3)',
  () =>
    redisClientsTarget(
      () => createClient({ url, RESP: 3 }).on('error', () => {}),
      (client) => client.close(),
      new Redis(url),
    ),
  { describe, it, beforeAll, afterAll },
  { pausedHolder: pausedHolderOn({ kind: 'redis', url }) },
);

describe('RedisLockProvider on a node-redis v6 createCluster()', () => {
  let cluster: RedisCluster | undefined;

  beforeAll(async () => {
    cluster = await RedisCluster.start();
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  /** A v6 Cluster client of the test's cluster, not opened yet (the store opens it). */
  function nodeCluster() {
    return createCluster({
      rootNodes: cluster!.startupNodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
    }).on('error', () => {});
  }

  test('a lock cycle on a Cluster the store opens: acquire, a waiter handed the lock, release; the client stays open', async () => {
    const client = nodeCluster();
    const manager = new LockManager({ provider: new RedisLockProvider({ redis: client }) });
    try {
      const name = unique('cycle');
      const held = await manager.acquire(name, { ttl: 10_000 });
      const waiting = manager.acquire(name, { ttl: 10_000, waitTimeout: 10_000 });
      await held.release();
      const next = await waiting;
      expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
      await next.release();
      expect(await manager.provider.acquire({ key: name, owner: 'again', ttl: 1_000, wait: false })).not.toBeNull();
      expect(await manager.provider.release(name, 'again')).toBe(true);
      await manager.provider.close();
      expect(client.isOpen).toBe(true);
    } finally {
      await manager.provider.close();
      if (client.isOpen) await client.close();
    }
  }, 30_000);

  test('a Cluster the app closed: a LockStoreError that says the connection is closed and names the Cluster address', async () => {
    const error = await closedClusterError(nodeCluster(), 'node-redis-v6');
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toContain(`Redis at 127.0.0.1:${cluster!.nodes[0].port}, `);
    expect((error as Error).message).toMatch(/\(Cluster\) failed \(the connection was closed\)/);
  }, 30_000);
});
