/**
 * The PostgreSQL store's tables as DDL (`statements/schema.sql`), for
 * migrations, and their creation on first use.
 */
import type { Pool, QueryResultRow } from 'pg';
import { postgresSql } from './postgres-lock-statements.js';
import { DEFAULT_POSTGRES_LOCK_TABLE, postgresLockTables, type PostgresLockTables } from './postgres-lock-tables.js';

/**
 * The DDL of the lock table and the waiters' queue (idempotent: `IF NOT EXISTS`;
 * adds the columns a table created by an older version lacks).
 * @internal
 */
export function schemaSql(tables: PostgresLockTables): string {
  return `${postgresSql('schema', tables)}\n`;
}

/**
 * The SQL that creates the default tables (`nest_locks`, `nest_locks_waiters`),
 * for migrations; same as `PostgresLockProvider.schemaSql()`.
 */
export const POSTGRES_LOCK_SCHEMA_SQL: string = schemaSql(postgresLockTables(DEFAULT_POSTGRES_LOCK_TABLE));

/**
 * A read of both tables that returns nothing (`statements/ping.sql`): a
 * missing table, or one that lacks a column, fails it.
 * @internal
 */
export function pingSql(tables: PostgresLockTables): string {
  return postgresSql('ping', tables);
}

/**
 * How long the DDL of {@link PostgresLockSchema} waits for a table lock before it
 * gives up (and is tried again): less than PostgreSQL's `deadlock_timeout`
 * (1 s by default), so that when its `ACCESS EXCLUSIVE` locks meet the lock
 * statements of running instances, the DDL is what gives way, not their call.
 * @internal
 */
export const SCHEMA_LOCK_TIMEOUT_MS = 200;

/**
 * Creates or completes the tables on first use (`createTable: true`), unless
 * a read finds them in place (every start after the first): the DDL takes
 * `ACCESS EXCLUSIVE` locks, which would hold up the lock statements of
 * running instances and could deadlock with them. When it must run, it runs
 * behind a transaction-level advisory lock (instances that start together do
 * not race on the catalog) and gives way to them (a short `lock_timeout`),
 * and is tried again, within `commandTimeout`.
 * @internal
 */
export class PostgresLockSchema {
  /** Whether the tables, their columns and the index are in place (`statements/schema-ready.sql`). */
  readonly readySql: string;
  /** The DDL behind its advisory lock and lock timeout, as one simple-protocol query (one transaction). */
  readonly createSql: string;

  constructor(
    tables: PostgresLockTables,
    private readonly commandTimeout: number,
  ) {
    this.readySql = postgresSql('schema-ready', tables);
    this.createSql = `${postgresSql('schema-lock', tables, { lockTimeoutMs: String(SCHEMA_LOCK_TIMEOUT_MS) })}\n${schemaSql(tables)}`;
  }

  /**
   * Makes sure the tables are in place on `pool`.
   * @throws the `pg` error of the DDL (marked `duringSchema`, for the message), or of the pool.
   */
  async ensure(pool: Pool): Promise<void> {
    const query = (text: string): Promise<{ rows: QueryResultRow[] }> =>
      pool.query({ text, query_timeout: this.commandTimeout } as never);
    const ready = await query(this.readySql).then(
      (r) => r.rows[0]?.ready === true,
      () => false, // a missing table or column; any other cause, the DDL reports
    );
    if (ready) return;
    const deadline = performance.now() + this.commandTimeout - 2 * SCHEMA_LOCK_TIMEOUT_MS;
    for (;;) {
      try {
        await query(this.createSql);
        return;
      } catch (err) {
        // 55P03: a table lock was not free in time; the lock traffic of running instances goes first.
        if ((err as { code?: unknown })?.code === '55P03' && performance.now() < deadline) continue;
        // (marks a permission error as the table creation's, for the message)
        if (err !== null && typeof err === 'object') (err as { duringSchema?: boolean }).duringSchema = true;
        throw err;
      }
    }
  }
}
