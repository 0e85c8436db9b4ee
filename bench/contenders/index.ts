import type { Contender } from './contender.js';
import { asyncMutex } from './async-mutex.contender.js';
import { rawMemory } from './raw-memory.contender.js';
import { murlockDefault, murlockTuned } from './murlock.contender.js';
import { noLockCeiling } from './no-lock.contender.js';
import {
  oursMemory,
  oursMemoryOtelIdle,
  oursMemoryOtelSdk,
  oursNodeRedis,
  oursPostgres,
  oursRedis,
  oursRedisReplicated,
  oursRedisStrict,
} from './ours.contenders.js';
import { rawPostgres } from './raw-postgres.contender.js';
import { rawRedis } from './raw-redis.contender.js';
import { redlock4Default, redlock4Tuned } from './redlock4.contender.js';
import { sesameDefault, sesameTuned } from './sesame-redlock.contender.js';
import { PERMIT_CONTENDERS } from './permits.contenders.js';
import { oursMysql, rawMysql } from './mysql.contenders.js';

export type { Contender, LockClient, BenchEnv } from './contender.js';

export const ALL_CONTENDERS: readonly Contender[] = [
  oursRedis,
  oursNodeRedis,
  oursRedisStrict,
  oursRedisReplicated,
  rawRedis,
  redlock4Default,
  redlock4Tuned,
  sesameDefault,
  sesameTuned,
  murlockDefault,
  murlockTuned,
  oursMemory,
  oursMemoryOtelIdle,
  oursMemoryOtelSdk,
  rawMemory,
  asyncMutex,
  oursPostgres,
  rawPostgres,
  oursMysql,
  rawMysql,
  noLockCeiling,
  ...PERMIT_CONTENDERS,
];

export function contenderById(id: string): Contender {
  const found = ALL_CONTENDERS.find((c) => c.id === id);
  if (!found) throw new Error(`Unknown contender "${id}"; known: ${ALL_CONTENDERS.map((c) => c.id).join(', ')}`);
  return found;
}

/**
 * Redis contenders with retry settings that matter only under contention: one entry per library for scenarios 1 and 2,
 * and this library's `waitForReplicas` (its cost per grant).
 */
/** Each Redis library at its defaults (this library on ioredis and on node-redis), with the raw baseline. */
const REDIS_DEFAULTS: readonly Contender[] = [
  oursRedis,
  oursNodeRedis,
  rawRedis,
  redlock4Default,
  sesameDefault,
  murlockDefault,
];
export const REDIS_UNCONTENDED: readonly Contender[] = [...REDIS_DEFAULTS, oursRedisReplicated];
export const REDIS_CONTENDED: readonly Contender[] = [
  ...REDIS_DEFAULTS,
  redlock4Tuned,
  sesameTuned,
  murlockTuned,
  oursRedisStrict,
  noLockCeiling,
];
export const MEMORY: readonly Contender[] = [oursMemory, oursMemoryOtelIdle, oursMemoryOtelSdk, rawMemory, asyncMutex];
export const POSTGRES: readonly Contender[] = [oursPostgres, rawPostgres];
/** Scenario 6b: PostgreSQL contenders and the no-lock ceiling (the section is the same Redis counter as scenario 3's). */
export const POSTGRES_CONTENDED: readonly Contender[] = [...POSTGRES, noLockCeiling];
