import type { LockModuleOptions } from 'nest-lock';

/**
 * The lock store, chosen by the environment: Redis with REDIS_URL, PostgreSQL
 * with DATABASE_URL, else in memory (one process only: fine on a laptop and in
 * tests, not for replicas).
 */
export function lockStoreOptions(env: NodeJS.ProcessEnv = process.env): LockModuleOptions {
  if (env.REDIS_URL) return { redis: env.REDIS_URL };
  if (env.DATABASE_URL) return { postgres: env.DATABASE_URL };
  return {};
}

/** Which store `lockStoreOptions` picks, in words, for the start-up message. */
export function lockStoreName(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REDIS_URL) return 'Redis (REDIS_URL)';
  if (env.DATABASE_URL) return 'PostgreSQL (DATABASE_URL)';
  return 'memory (one process; set REDIS_URL or DATABASE_URL for replicas)';
}
