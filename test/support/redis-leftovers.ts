import type { Cluster, Redis } from 'ioredis';
import { lockKeys } from '../../lib/stores/redis/redis-lock.scripts.js';

/** The keys of a lock's store key (`{k}`, `{k}:fence`, `{k}:q`, `{k}:w`, `{k}:h`, `{k}:t`) that exist in Redis now. */
export async function redisLeftovers(client: Redis | Cluster, key: string): Promise<string[]> {
  const keys = lockKeys(key);
  const found = await Promise.all(keys.map((k) => client.exists(k)));
  return keys.filter((_, i) => found[i] === 1);
}
