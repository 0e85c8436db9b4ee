import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Contender, LockClient } from './contender.js';
import { sleep } from '../support/stats.js';

export const RAW_PG_TABLE = 'bench_raw_locks';

/**
 * The raw PostgreSQL baseline: one row per lock, taken by an upsert that
 * only overwrites an expired row, retried every 1 ms while held; released by
 * an owner-checked DELETE.
 */
export const rawPostgres: Contender = {
  id: 'raw-postgres',
  label: 'raw upsert + DELETE (PostgreSQL)',
  store: 'postgres',
  kind: 'raw',
  retry: '-',
  waits: 'polls every 1 ms',
  async create(env) {
    const pool = new pg.Pool({ connectionString: env.pgUrl, max: 10 });
    await pool.query(
      `CREATE TABLE IF NOT EXISTS ${RAW_PG_TABLE} (name text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`,
    );
    const acquireSql =
      `INSERT INTO ${RAW_PG_TABLE} (name, owner, expires_at) VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond') ` +
      `ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at ` +
      `WHERE ${RAW_PG_TABLE}.expires_at < clock_timestamp() RETURNING owner`;
    const releaseSql = `DELETE FROM ${RAW_PG_TABLE} WHERE name = $1 AND owner = $2`;
    const client: LockClient = {
      async withLock(name, fn) {
        const token = randomBytes(16).toString('hex');
        while ((await pool.query({ text: acquireSql, values: [name, token, env.ttl] })).rowCount !== 1) await sleep(1);
        try {
          return await fn();
        } finally {
          await pool.query({ text: releaseSql, values: [name, token] });
        }
      },
      async close() {
        await pool.end();
      },
    };
    return client;
  },
};
