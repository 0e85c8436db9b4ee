import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { Redis } from 'ioredis';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS } from '../../lib/stores/redis/redis-lock.scripts.js';
import { redisLeftovers } from '../support/redis-leftovers.js';
import { pausedHolderOn } from './paused-holder-process.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeLockProviderConformance(
  'RedisLockProvider',
  () => {
    const redis = new Redis(url);
    return {
      provider: new RedisLockProvider({ redis: url }),
      peer: new RedisLockProvider({ redis: url }),
      releaseWindowMs: FENCE_GRACE_MS,
      leftovers: (key) => redisLeftovers(redis, key),
      cleanup: async () => void (await redis.quit()),
    };
  },
  { describe, it, beforeAll, afterAll },
  { pausedHolder: pausedHolderOn({ kind: 'redis', url }) },
);
