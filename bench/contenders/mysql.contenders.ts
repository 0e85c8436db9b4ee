import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { MysqlLockProvider } from '../../lib/stores/mysql/index.js';
import type { Contender, LockClient } from './contender.js';
import { noLockCeiling } from './no-lock.contender.js';
import { ours } from './ours.contenders.js';
import { sleep } from '../support/stats.js';

/** The raw poller's table: not the store's. */
export const RAW_MYSQL_TABLE = 'bench_raw_locks';

/** This library on MySQL / MariaDB (`BENCH_MYSQL_URL`), its defaults. */
export const oursMysql = ours(
  'ours-mysql',
  'nest-lock (mysql)',
  'mysql',
  async (env) => new MysqlLockProvider({ connection: env.mysqlUrl, tableName: 'bench_nest_locks' }),
);

/**
 * The raw MySQL baseline: one row per lock, taken by an `INSERT … ON
 * DUPLICATE KEY UPDATE` that overwrites only an expired row, retried every
 * 1 ms while held; released by an owner-checked `DELETE`. (MySQL counts 2
 * affected rows for an update by the upsert, 1 for an insert, 0 when the row
 * stayed as it was.)
 */
export const rawMysql: Contender = {
  id: 'raw-mysql',
  label: 'raw upsert + DELETE (MySQL)',
  store: 'mysql',
  kind: 'raw',
  retry: '-',
  waits: 'polls every 1 ms',
  async create(env) {
    // Without FOUND_ROWS, an upsert that left the row as it was (held) affects 0 rows.
    const pool = mysql.createPool({ uri: env.mysqlUrl, connectionLimit: 10, flags: ['-FOUND_ROWS'] });
    await pool.query(
      `CREATE TABLE IF NOT EXISTS ${RAW_MYSQL_TABLE} (name VARBINARY(255) PRIMARY KEY, owner VARBINARY(64) NOT NULL, expires_at DATETIME(6) NOT NULL) ENGINE = InnoDB`,
    );
    const acquireSql =
      `INSERT INTO ${RAW_MYSQL_TABLE} (name, owner, expires_at) VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND) ` +
      `ON DUPLICATE KEY UPDATE owner = IF(expires_at < UTC_TIMESTAMP(6), VALUES(owner), owner), ` +
      `expires_at = IF(expires_at < UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)`;
    const releaseSql = `DELETE FROM ${RAW_MYSQL_TABLE} WHERE name = ? AND owner = ?`;
    const client: LockClient = {
      async withLock(name, fn) {
        const token = randomBytes(16).toString('hex');
        const take = async (): Promise<boolean> => {
          const [r] = await pool.execute<mysql.ResultSetHeader>(acquireSql, [name, token, env.ttl * 1000]);
          return r.affectedRows > 0;
        };
        while (!(await take())) await sleep(1);
        try {
          return await fn();
        } finally {
          await pool.execute(releaseSql, [name, token]);
        }
      },
      async close() {
        await pool.end();
      },
    };
    return client;
  },
};

/** Scenario 6a on MySQL / MariaDB: this library beside the raw poller. */
export const MYSQL: readonly Contender[] = [oursMysql, rawMysql];
/** Scenario 6b on MySQL / MariaDB: and the no-lock ceiling. */
export const MYSQL_CONTENDED: readonly Contender[] = [...MYSQL, noLockCeiling];

/** The server's version (`SELECT VERSION()`), or `undefined` when it does not answer: scenario 6's MySQL rows are then skipped. */
export async function mysqlServerVersion(url: string): Promise<string | undefined> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: 2_000 }).catch(() => undefined);
  if (!conn) return undefined;
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    return String(rows[0]?.v);
  } catch {
    return undefined;
  } finally {
    await conn.end().catch(() => undefined);
  }
}
