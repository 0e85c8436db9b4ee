import type { LockProvider } from '../contract/lock-provider.js';
import type { RedisConnection } from './redis/index.js';
import type { PostgresConnection, PostgresLockProviderOptions } from './postgres/index.js';
import type { MysqlConnection, MysqlLockProviderOptions } from './mysql/index.js';

/** Which store to build, and how (the store part of `LockModule.forRoot()` options; see {@link createLockProvider}). */
export interface LockStoreOptions {
  /**
   * The store. Default: a new {@link InMemoryLockProvider} (one process only).
   * `Test.createTestingModule(...).overrideProvider(LockProvider)` replaces it too.
   */
  provider?: LockProvider;
  /**
   * Keep locks in Redis (optional peer `ioredis`): a URL, ioredis options, or
   * an existing `Redis`/`Cluster` client (left open on shutdown; a connection
   * built here is closed).
   *
   * @example
   * ```ts
   * LockModule.forRoot({ redis: process.env.REDIS_URL, commandTimeout: 1_000 })
   * ```
   */
  redis?: RedisConnection;
  /**
   * Keep locks in PostgreSQL, one row per lock (optional peer `pg`): a
   * connection string, a `pg.PoolConfig`, a `pg.Pool` (left open on
   * shutdown), or full {@link PostgresLockProviderOptions}.
   *
   * @example
   * ```ts
   * LockModule.forRoot({ postgres: process.env.DATABASE_URL, commandTimeout: 2_000 })
   * ```
   */
  postgres?: PostgresConnection | PostgresLockProviderOptions;
  /**
   * Keep locks in MySQL 8.0+ or MariaDB 10.6+, one row per lock (optional
   * peer `mysql2`): a `mysql://` URL, `mysql2` pool options, a `mysql2` pool
   * (left open on shutdown), or full {@link MysqlLockProviderOptions}.
   *
   * @example
   * ```ts
   * LockModule.forRoot({ mysql: process.env.MYSQL_URL, commandTimeout: 2_000 })
   * ```
   */
  mysql?: MysqlConnection | MysqlLockProviderOptions;
  /**
   * With `redis`: a grant counts only once this many replicas have it
   * (Redis `WAIT`); see `RedisLockProviderOptions.waitForReplicas`. Default `0`.
   */
  waitForReplicas?: number;
  /**
   * With `redis`: what to do about a Redis whose `maxmemory-policy` is not
   * `noeviction` (it may evict lock keys): `'warn'` logs it once (default),
   * `'fail'` stops the boot and fails every lock call until it is fixed,
   * `false` does not check. See `RedisLockProviderOptions.evictionCheck`.
   */
  evictionCheck?: 'warn' | 'fail' | false;
  /**
   * Upper bound in ms on every store call, also while the client
   * reconnects; past it the call fails with {@link LockStoreError}.
   * Default `2000`. Not used by the in-memory store.
   */
  commandTimeout?: number;
}
