import { Redis } from 'ioredis';
import { Semaphore } from 'redis-semaphore';
import { LockManager, type LockMode } from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import type { BenchEnv, Contender, LockClient } from './contender.js';

/** How a call of scenarios 9 and 10 holds its name: one of `limit` permits, or `mode` of a read/write lock. */
export interface PermitHold {
  readonly limit?: number;
  readonly mode?: LockMode;
}

/** A lock client that can also hold a permit of a semaphore or a side of a read/write lock (`withLock`: a plain lock). */
export interface PermitClient extends LockClient {
  withPermit<T>(name: string, fn: () => Promise<T>, hold: PermitHold): Promise<T>;
}

/**
 * A contender of scenarios 9 and 10. `spread`: a reference whose `limit`
 * callers run one in each process, not all in the first.
 */
export type PermitContender = Contender & { create(env: BenchEnv): Promise<PermitClient>; spread?: boolean };

/** A permit client's plain lock: one permit of one. */
function permitClient(withPermit: PermitClient['withPermit'], close: () => Promise<void>): PermitClient {
  return { withPermit, withLock: (name, fn) => withPermit(name, fn, {}), close };
}

/**
 * This library on Redis: `LockManager.withLock(name, fn, { onHeld: 'wait', limit, mode })`,
 * defaults otherwise; `exclusiveOnly` turns every call into the plain exclusive lock
 * (scenario 10's comparison: the same workload without shared holders).
 */
function ours(id: string, label: string, exclusiveOnly: boolean): PermitContender {
  return {
    id,
    label,
    store: 'redis',
    kind: 'ours',
    retry: '-',
    waits: exclusiveOnly
      ? 'every call exclusive (a plain lock): FIFO queue, woken on release, local hand-off between callers of one process'
      : 'FIFO queue per name in Redis, woken on release; a release grants the head of the queue while it fits (permits left, or consecutive shared waiters)',
    async create(env) {
      const provider = new RedisLockProvider({ redis: env.redisUrl });
      const manager = new LockManager({ provider, ttl: env.ttl });
      return permitClient(
        (name, fn, hold) =>
          manager.withLock(name, fn, { onHeld: 'wait', ...(exclusiveOnly ? {} : hold) }) as ReturnType<typeof fn>,
        async () => {
          await manager.close();
          await provider.close();
        },
      );
    },
  };
}

export const oursRedisPermits = ours('ours-redis-permits', 'nest-lock (redis)', false);
export const oursRedisExclusiveOnly = ours(
  'ours-redis-exclusive-only',
  'nest-lock (redis), every call exclusive',
  true,
);

/** redis-semaphore's documented defaults (README, `new Semaphore(client, key, maxCount, options)`). */
const REDIS_SEMAPHORE_DEFAULTS = 'polls every 10 ms (retryInterval), gives up after 10 s (acquireTimeout); no queue';
/** Tuned: a 1 ms poll, and no give-up within a bench run. */
const REDIS_SEMAPHORE_TUNED = { retryInterval: 1, acquireTimeout: 600_000 } as const;

/**
 * `redis-semaphore` 5.8 `Semaphore` (a sorted set of holders per key, taken by
 * a Lua script; waiters poll): one instance per call, `acquire()` + `release()`,
 * the bench lease as `lockTimeout` (refreshed at 80 % of it, its default).
 */
function redisSemaphore(retry: 'default' | 'tuned'): PermitContender {
  return {
    id: `redis-semaphore-${retry}`,
    label: 'redis-semaphore 5.8',
    store: 'redis',
    kind: 'peer',
    retry,
    waits:
      retry === 'default'
        ? REDIS_SEMAPHORE_DEFAULTS
        : 'polls every 1 ms (retryInterval: 1), gives up after 600 s; no queue',
    async create(env) {
      const redis = new Redis(env.redisUrl, { lazyConnect: true });
      await redis.connect();
      const options = { lockTimeout: env.ttl, ...(retry === 'tuned' ? REDIS_SEMAPHORE_TUNED : {}) };
      return permitClient(
        async (name, fn, hold) => {
          const semaphore = new Semaphore(redis, name, hold.limit ?? 1, options);
          await semaphore.acquire();
          try {
            return await fn();
          } finally {
            await semaphore.release();
          }
        },
        async () => {
          await redis.quit();
        },
      );
    },
  };
}

export const redisSemaphoreDefault = redisSemaphore('default');
export const redisSemaphoreTuned = redisSemaphore('tuned');

/**
 * Not a lock: `limit` callers of one process run the section back to back
 * (scenario 9 gives the first process that many callers and the others none),
 * the most any semaphore of `limit` permits can reach on this machine.
 */
export const noPermitCeiling: PermitContender = {
  id: 'no-permit-ceiling',
  label: 'no lock, limit callers (ceiling)',
  store: 'redis',
  kind: 'reference',
  retry: '-',
  waits: 'no lock: as many callers as permits run the section back to back; no semaphore can go faster',
  async create() {
    return permitClient(
      (_name, fn) => fn(),
      async () => {},
    );
  },
};

/**
 * Not a lock: `limit` callers, one in each process, each section followed
 * by one Redis round trip (a `PING` on a connection of its own): what a
 * semaphore that asks the store once per grant, and does nothing else, could
 * reach at most here. Its permits move between processes, as a semaphore's
 * do, where the ceiling runs all its callers in one.
 */
export const permitRoundTripFloor: PermitContender = {
  id: 'permit-round-trip-floor',
  label: 'no lock, a caller per process, 1 round trip a section',
  store: 'redis',
  kind: 'reference',
  retry: '-',
  spread: true,
  waits:
    'no lock: as many callers as permits, one per process, each section followed by one PING: a semaphore making one store call per grant and nothing else',
  async create(env) {
    const redis = new Redis(env.redisUrl, { lazyConnect: true });
    await redis.connect();
    return permitClient(
      async (_name, fn) => {
        const value = await fn();
        await redis.ping();
        return value;
      },
      async () => {
        await redis.quit();
      },
    );
  },
};

/** Scenario 9: a semaphore of 4 permits on one name. */
export const SEMAPHORE: readonly PermitContender[] = [
  oursRedisPermits,
  redisSemaphoreDefault,
  redisSemaphoreTuned,
  noPermitCeiling,
  permitRoundTripFloor,
];
/** Scenario 10: the read-heavy workload with shared readers, and all exclusive. */
export const READ_WRITE: readonly PermitContender[] = [oursRedisPermits, oursRedisExclusiveOnly];
/** Every contender of scenarios 9 and 10 (for `--contenders=` and the workers' look-up by id). */
export const PERMIT_CONTENDERS: readonly PermitContender[] = [
  oursRedisPermits,
  oursRedisExclusiveOnly,
  redisSemaphoreDefault,
  redisSemaphoreTuned,
  noPermitCeiling,
  permitRoundTripFloor,
];
