import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Contender, LockClient } from './contender.js';
import { sleep } from '../support/stats.js';

/** Compare-and-delete: only the owner's token frees the key. */
export const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

type RawRedis = Redis & { benchRelease(key: string, token: string): Promise<number> };

/**
 * The raw baseline: `SET key token NX PX ttl`, retried every 1 ms while held,
 * and a compare-and-delete script (EVALSHA) to release.
 */
export const rawRedis: Contender = {
  id: 'raw-redis',
  label: 'raw SET NX PX + CAD',
  store: 'redis',
  kind: 'raw',
  retry: '-',
  waits: 'polls every 1 ms',
  async create(env) {
    const redis = new Redis(env.redisUrl, { lazyConnect: true }) as RawRedis;
    redis.defineCommand('benchRelease', { numberOfKeys: 1, lua: COMPARE_AND_DELETE });
    await redis.connect();
    const client: LockClient = {
      async withLock(name, fn) {
        const token = randomBytes(16).toString('hex');
        while ((await redis.set(name, token, 'PX', env.ttl, 'NX')) !== 'OK') await sleep(1);
        try {
          return await fn();
        } finally {
          await redis.benchRelease(name, token);
        }
      },
      async close() {
        await redis.quit();
      },
    };
    return client;
  },
};
