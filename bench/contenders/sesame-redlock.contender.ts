import { Redis } from 'ioredis';
import { Redlock } from '@sesamecare-oss/redlock';
import { REDLOCK_TUNED, REDLOCK_WAITS, redisPeer, type Contender, type LockClient } from './contender.js';

/**
 * `@sesamecare-oss/redlock` (the maintained node-redlock 5 fork) through
 * `using()`, which also extends the lock on a timer. Documented defaults:
 * retryCount 10, retryDelay 200, retryJitter 100.
 */
function sesame(retry: 'default' | 'tuned'): Contender {
  return redisPeer('sesame-redlock', '@sesamecare-oss/redlock', retry, REDLOCK_WAITS[retry], async (env) => {
    const redis = new Redis(env.redisUrl, { lazyConnect: true });
    await redis.connect();
    const redlock = new Redlock([redis], retry === 'default' ? {} : REDLOCK_TUNED);
    redlock.on('error', () => {});
    const client: LockClient = {
      withLock: (name, fn) => redlock.using([name], env.ttl, () => fn()),
      close: async () => {
        await redis.quit();
      },
    };
    return client;
  });
}

export const sesameDefault = sesame('default');
export const sesameTuned = sesame('tuned');
