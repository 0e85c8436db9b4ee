import { randomBytes } from 'node:crypto';
import { RedisLockProvider, type NodeRedisCluster } from '../../lib/stores/redis/index.js';

/**
 * Opens `client` (a node-redis `createCluster()`), locks and unlocks once
 * through a store on it, closes the client, and returns what the next
 * acquire threw (its message should name the Cluster's first node).
 */
export async function closedClusterError(
  client: NodeRedisCluster & { close(): Promise<unknown> },
  prefix: string,
): Promise<unknown> {
  await client.connect();
  const provider = new RedisLockProvider({ redis: client, commandTimeout: 1_000 });
  const key = `${prefix}:closed:${randomBytes(6).toString('hex')}`;
  try {
    if ((await provider.acquire({ key, owner: 'a', ttl: 5_000, wait: false })) === null) throw new Error('not granted');
    if (!(await provider.release(key, 'a'))) throw new Error('not released');
    await client.close();
    return await provider.acquire({ key, owner: 'b', ttl: 1_000, wait: false }).then(
      () => undefined,
      (err: unknown) => err,
    );
  } finally {
    await provider.close();
    if (client.isOpen) await client.close();
  }
}
