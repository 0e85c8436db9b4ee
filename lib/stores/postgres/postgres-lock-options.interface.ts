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
  /**
   * Background pruning of the rows of lock names unused for long (the table
   * keeps one row per name ever used). On by default: about every `everyMs`,
   * one instance at a time deletes, in batches, the rows whose lease ended
   * more than `olderThanMs` ago, as {@link PostgresLockProvider.prune} does.
   * `false` turns it off (call `prune()` yourself, or never).
   * Default `{ olderThanMs: 3_600_000, everyMs: 300_000 }`.
   */
  prune?: boolean | PostgresLockPruneOptions;
}

/** The `prune` option of {@link PostgresLockProviderOptions}: the background pruning's age and interval. */
export interface PostgresLockPruneOptions {
  /**
   * Delete the rows of locks whose lease ended more than this many ms ago
   * (the argument of `prune()`). At least `60000`. Default `3600000` (one hour).
   */
  olderThanMs?: number;
  /**
   * About how often (ms) each instance tries to prune; each wait is drawn
   * between 0.75× and 1.25× of it, the first one from the provider's first
   * database call. From `1000` to `86400000` (a day). Default `300000` (five minutes).
   */
  everyMs?: number;
}
