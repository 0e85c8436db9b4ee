/**
 * An instance that starts while others run their lock traffic: with the
 * tables in place it runs no DDL (whose ACCESS EXCLUSIVE locks would hold up
 * and could deadlock with the running instances' statements); when it must
 * complete the tables, its DDL gives way to the traffic and tries again.
 */
import pg from 'pg';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueTable('boot');
const providers: PostgresLockProvider[] = [];
function instance(): PostgresLockProvider {
  const p = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 5_000 });
  providers.push(p);
  return p;
}

/** A transaction of another session that reads the waiters table and stays open: it holds ACCESS SHARE on it, as a lock statement in flight does. */
async function openReader(): Promise<{ end(): Promise<void> }> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`SELECT count(*) FROM "${table}_waiters"`);
  return {
    async end() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await dropLockTables(table);
});

test('a new instance takes its first lock at once while a statement of another instance holds a table: no DDL runs when the tables are in place', async () => {
  const first = instance();
  expect(await first.acquire({ key: 'k1', owner: 'a', ttl: 30_000, wait: false })).not.toBeNull();
  const reader = await openReader();
  try {
    const started = performance.now();
    // (the DDL of its start would wait for ACCESS EXCLUSIVE behind the reader, holding up this call until commandTimeout)
    expect(await instance().acquire({ key: 'k2', owner: 'b', ttl: 30_000, wait: false })).not.toBeNull();
    expect(performance.now() - started).toBeLessThan(2_000);
  } finally {
    await reader.end();
  }
});

test('an instance that must complete the tables waits for the traffic, not the other way round, and then completes them', async () => {
  // Tables that lack a part (here the waiters' index, as tables of an older version lack a column), and a statement in flight on one.
  const first = instance();
  expect(await first.acquire({ key: 'k3', owner: 'a', ttl: 30_000, wait: false })).not.toBeNull();
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`DROP INDEX "${table}_waiters_name_idx"`);
    const reader = await openReader();
    let open = true;
    try {
      const started = performance.now();
      const upgraded = instance().acquire({ key: 'k4', owner: 'b', ttl: 30_000, wait: false });
      await sleep(600);
      // Meanwhile the other instance's lock statements go on: the DDL gave way (lock_timeout) instead of queueing ahead of them.
      const during = performance.now();
      expect(await first.release('k3', 'a')).toBe(true);
      expect(performance.now() - during).toBeLessThan(1_000);
      await reader.end();
      open = false;
      expect(await upgraded).not.toBeNull();
      expect(performance.now() - started).toBeGreaterThanOrEqual(500);
    } finally {
      if (open) await reader.end();
    }
    const index = await admin.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [`"${table}_waiters_name_idx"`]);
    expect(index.rows[0].present).toBe(true);
  } finally {
    await admin.end();
  }
});
