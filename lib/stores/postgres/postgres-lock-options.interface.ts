import type { Pool, PoolConfig } from 'pg';

/**
 * How {@link PostgresLockProvider} reaches PostgreSQL: a `pg.Pool` the app
 * already has (the provider uses it and leaves it open on close), or a
 * connection string / `pg.PoolConfig` (the provider opens its own pool and
 * ends it on close).
 */
export type PostgresConnection = string | PoolConfig | Pool;

/** Options of {@link PostgresLockProvider}. */
export interface PostgresLockProviderOptions {
  /** A `pg.Pool` (yours, left open), or a connection string / `PoolConfig` (a pool the provider owns and ends). */
  connection: PostgresConnection;
  /**
   * The lock table, optionally schema-qualified (`'locks.nest_locks'`). A
   * second table, `<tableName>_waiters`, holds the FIFO queue of waiters.
   * Letters, digits and `_` only; at most 63 characters in all. Default `'nest_locks'`.
   */
  tableName?: string;
  /**
   * Upper bound in ms on every call to the database (connect, statement,
   * answer). Past it the call fails with {@link LockStoreError}. Default `2000`.
   */
  commandTimeout?: number;
  /**
   * Create the tables (`CREATE TABLE IF NOT EXISTS`) on first use. Default
   * `true`. Set `false` when migrations own the schema; take the SQL from
   * {@link PostgresLockProvider.schemaSql}.
   */
  createTable?: boolean;
  /**
   * Run the lock statements as named prepared statements, planned once per
   * connection (about twice as fast as planning each call). Default `true`.
   * Set `false` behind a pooler that cannot keep prepared statements
   * (PgBouncer in transaction mode before 1.21).
   */
  prepareStatements?: boolean;
}
