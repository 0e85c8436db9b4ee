import type { Redis } from 'ioredis';
import { RedisLockProvider, type RedisClient } from '../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS } from '../../lib/stores/redis/redis-lock.scripts.js';
import { redisLeftovers } from './redis-leftovers.js';

/**
 * A conformance target of two Redis providers, each on a client `open()`
 * makes (closed by `close()`), inspected by the ioredis client `inspector`
 * (quit by the cleanup).
 */
export function redisClientsTarget<C extends RedisClient>(
  open: () => C,
  close: (client: C) => Promise<unknown>,
  inspector: Redis,
) {
  const clients = [open(), open()];
  return {
    provider: new RedisLockProvider({ redis: clients[0] }),
    peer: new RedisLockProvider({ redis: clients[1] }),
    releaseWindowMs: FENCE_GRACE_MS,
    leftovers: (key: string) => redisLeftovers(inspector, key),
    cleanup: async () => {
      await Promise.all(clients.map(close));
      await inspector.quit();
    },
  };
}
