import { Redis } from 'ioredis';
import Redlock from 'redlock';
import { REDLOCK_TUNED, REDLOCK_WAITS, redisPeer, type Contender, type LockClient } from './contender.js';

/** `redlock` 4 (the npm "latest"): `lock()` + `unlock()`, one Redis. Documented defaults: retryCount 10, retryDelay 200, retryJitter 100. */
function redlock4(retry: 'default' | 'tuned'): Contender {
  return redisPeer('redlock4', 'redlock 4', retry, REDLOCK_WAITS[retry], async (env) => {
    const redis = new Redis(env.redisUrl, { lazyConnect: true });
    await redis.connect();
    const redlock = new Redlock([redis], retry === 'default' ? {} : REDLOCK_TUNED);
    redlock.on('clientError', () => {});
    const client: LockClient = {
      async withLock(name, fn) {
        const lock = await redlock.lock(name, env.ttl);
        try {
          return await fn();
        } finally {
          await lock.unlock();
        }
      },
      async close() {
        await redis.quit();
      },
    };
    return client;
  });
}

export const redlock4Default = redlock4('default');
export const redlock4Tuned = redlock4('tuned');
