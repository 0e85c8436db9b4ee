import type { Pool, PoolOptions } from 'mysql2';
import type { Pool as PromisePool } from 'mysql2/promise';

/**
 * How {@link MysqlLockProvider} reaches MySQL or MariaDB: a `mysql2` pool the
 * app already has (from `mysql2` or `mysql2/promise`, such as the one TypeORM,
 * Knex, Kysely or Drizzle holds; the provider uses it and leaves it open on
 * close), or a `mysql://` URL / `mysql2` pool options (the provider opens its
 * own pool and ends it on close).
 */
export type MysqlConnection = string | PoolOptions | Pool | PromisePool;

/** Options of {@link MysqlLockProvider}. */
export interface MysqlLockProviderOptions {
  /** A `mysql2` pool (yours, left open), or a `mysql://` URL / pool options (a pool the provider owns and ends). */
  connection: MysqlConnection;
  /**
   * The lock table, optionally in another database (`'locks.nest_locks'`). A
   * second table, `<tableName>_waiters`, holds the FIFO queue of waiters.
   * Letters, digits and `_` only; the table part at most 56 characters.
   * Default `'nest_locks'`.
   */
  tableName?: string;
  /**
   * Upper bound in ms on every call to the database (connect, statement,
   * answer). Past it the call fails with {@link LockStoreError}. Default `2000`.
   */
  commandTimeout?: number;
  /**
   * Create the tables (`CREATE TABLE IF NOT EXISTS`) on first use, when a read
   * finds them missing. Default `true`. Set `false` when migrations own the
   * schema; take the SQL from {@link MysqlLockProvider.schemaSql}.
   */
  createTable?: boolean;
  /**
   * Background pruning of the rows of lock names unused for long (the table
   * keeps a row per name ever used, with its fencing counter). On by default
   * (`true`: rows whose lease ended more than an hour ago, tried about every
   * five minutes): off the lock path, one instance at a time per table, in
   * batches, deleting what {@link MysqlLockProvider.prune} would delete.
   * `false` turns it off (call `prune()` yourself, or never).
   */
  prune?: boolean | MysqlLockPruneOptions;
}

/** The `prune` option of {@link MysqlLockProviderOptions}: the background pruning's age and interval. */
export interface MysqlLockPruneOptions {
  /**
   * Prune the rows of locks whose lease ended more than this many ms ago
   * (the argument of `prune()`). At least `60000`. Default `3600000` (one hour).
   */
  olderThanMs?: number;
  /**
   * About how often (ms) each instance tries to prune; each wait is drawn
   * between 0.75 and 1.25 times it. From `1000` to `86400000`. Default `300000` (five minutes).
   */
  everyMs?: number;
}
