/** Shared settings of the PostgreSQL tests: the database, and a table name per test file. */
import pg from 'pg';
import { PostgresLockProvider, type PostgresLockProviderOptions } from '../../lib/stores/postgres/index.js';

/** The test database (override with TEST_POSTGRES_URL). */
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A table name of its own for one test file (and run), so files never collide. */
export function uniqueTable(label: string): string {
  return `t_${label}_${process.pid}_${Date.now().toString(36)}`.slice(0, 40);
}

/** Runs one statement on a short-lived connection of its own. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  values?: unknown[],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Drops the lock table and its waiter table. */
export async function dropLockTables(table: string): Promise<void> {
  await sql(`DROP TABLE IF EXISTS "${table}", "${table}_waiters"`);
}

/**
 * Two providers on `table`, standing for two processes (each has its own
 * pool, LISTEN connection and local queue); both closed and the tables
 * dropped after the enclosing block's tests. Call inside a `describe`.
 */
export function twoProcesses(
  table: string,
  options: Omit<PostgresLockProviderOptions, 'connection' | 'tableName'> = {},
): { a: PostgresLockProvider; b: PostgresLockProvider } {
  const a = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, ...options });
  const b = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, ...options });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await dropLockTables(table);
  });
  return { a, b };
}
