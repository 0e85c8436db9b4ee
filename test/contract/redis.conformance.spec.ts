import { Redis } from 'ioredis';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS } from '../../lib/stores/redis/redis-lock.scripts.js';
import { describeLockProviderConformance } from './lock-provider.conformance.js';
import { redisLeftovers } from '../support/redis-leftovers.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeLockProviderConformance('RedisLockProvider', async () => {
  const redis = new Redis(url);
  return {
    provider: new RedisLockProvider({ redis: url }),
    peer: new RedisLockProvider({ redis: url }),
    child: { kind: 'redis', url },
    releaseWindowMs: FENCE_GRACE_MS,
    leftovers: (key) => redisLeftovers(redis, key),
    cleanup: async () => void (await redis.quit()),
  };
});
