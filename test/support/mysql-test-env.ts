/** Shared settings of the MySQL / MariaDB tests: the database, and a table name per test file. */
import mysql from 'mysql2/promise';

/** The test database (override with TEST_MYSQL_URL). */
export const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** A table name of its own for one test file (and run), so files never collide. */
export function uniqueMysqlTable(label: string): string {
  return `t_${label}_${process.pid}_${Date.now().toString(36)}`.slice(0, 40);
}

/** Runs one statement on a short-lived connection of its own. */
export async function mysqlQuery<T = unknown>(text: string, values?: unknown[]): Promise<T> {
  const conn = await mysql.createConnection(MYSQL_URL);
  try {
    return (await conn.query(text, values))[0] as T;
  } finally {
    await conn.end();
  }
}

/** Drops the lock table and its waiter table. */
export async function dropMysqlLockTables(table: string): Promise<void> {
  await mysqlQuery(`DROP TABLE IF EXISTS \`${table}\`, \`${table}_waiters\``);
}
