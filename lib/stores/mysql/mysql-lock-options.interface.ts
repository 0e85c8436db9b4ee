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
}
