/**
 * The statement files (tables and statements) against the real server: the DDL and every statement run as
 * the provider runs them (named prepared statements), on a table whose name
 * needs its quotes (mixed case, a reserved word, in a schema of its own).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresLockProvider, POSTGRES_LOCK_SCHEMA_SQL } from '../../../lib/stores/postgres/index.js';
import { PostgresLockSchema, pingSql, schemaSql } from '../../../lib/stores/postgres/postgres-lock-schema.js';
import { postgresLockStatements, postgresSql } from '../../../lib/stores/postgres/postgres-lock-statements.js';
import { postgresLockTables } from '../../../lib/stores/postgres/postgres-lock-tables.js';
import { POSTGRES_URL, sql } from '../../support/pg-test-env.js';
import { repoRoot } from '../../support/paths.js';
import { sleep } from '../../support/sleep.js';

const schema = `NlSql_${process.pid}_${Date.now().toString(36)}`;
const tableName = `${schema}.Select`; // unquoted, "Select" is a syntax error and "NlSql_..." folds to lower case
const tables = postgresLockTables(tableName);
const statements = postgresLockStatements(tables);
const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
let prepared = 0;
/** Runs a statement as a named prepared statement, as the provider does. */
const run = async (text: string, values: unknown[]): Promise<pg.QueryResultRow[]> =>
  (await pool.query({ name: `nl_sql_spec_${prepared++}`, text, values })).rows;

beforeAll(async () => {
  await sql(`CREATE SCHEMA "${schema}"`);
});

afterAll(async () => {
  await pool.end();
  await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

test('the default schema SQL is the one of the default table', () => {
  expect(POSTGRES_LOCK_SCHEMA_SQL).toBe(PostgresLockProvider.schemaSql());
  expect(POSTGRES_LOCK_SCHEMA_SQL).toBe(schemaSql(postgresLockTables('nest_locks')));
  expect(POSTGRES_LOCK_SCHEMA_SQL).toContain('CREATE TABLE IF NOT EXISTS "nest_locks" (');
});

test('docs/stores.md shows the schema SQL as the provider runs it', () => {
  const doc = readFileSync(join(repoRoot, 'docs', 'stores.md'), 'utf8');
  const shown = /```sql\n([\s\S]*?)```/.exec(doc)?.[1];
  expect(shown).toBe(POSTGRES_LOCK_SCHEMA_SQL);
});

test('every statement file opens with its header, and its placeholders are filled for the quoted table', () => {
  const files = readdirSync(join(repoRoot, 'lib', 'stores', 'postgres', 'statements')).filter((f) =>
    f.endsWith('.sql'),
  );
  expect(files.length).toBeGreaterThan(15);
  const values = { olderThanMs: '60000', batch: '10', timeoutMs: '1000', lockTimeoutMs: '200' };
  for (const file of files) {
    const text = postgresSql(file.replace(/\.sql$/, ''), tables, values);
    expect(text).not.toMatch(/\{\{|\/\*|Input:/);
  }
  expect(postgresSql('listen', tables)).toBe(`LISTEN "${tableName}"`);
});

test('the DDL creates both tables and the index, quoted, and runs again without error', async () => {
  const { createSql, readySql } = new PostgresLockSchema(tables, 5_000);
  expect((await pool.query(readySql).catch((err: Error) => err)) instanceof Error).toBe(true);
  await pool.query(createSql);
  await pool.query(createSql);
  expect((await pool.query(readySql)).rows).toEqual([{ ready: true }]);
  const rows = await sql<{ relname: string }>(
    'SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY c.relname',
    [schema],
  );
  expect(rows.map((r) => r.relname)).toEqual(
    expect.arrayContaining(['Select', 'Select_pkey', 'Select_waiters', 'Select_waiters_name_idx']),
  );
  expect(await run(pingSql(tables), [])).toEqual([]);
});

test('every lock statement runs on the quoted table and answers the columns the provider reads', async () => {
  const granted = await run(statements.acquire, ['k', 'o1', 10_000, null, null, 1, null]);
  expect(granted).toHaveLength(1);
  expect(granted[0]).toMatchObject({ ticket: null, mine: null, held_ms: null });
  expect(typeof granted[0].token).toBe('number');

  const queued = await run(statements.acquire, ['k', 'o2', 10_000, null, 5_000, 1, null]);
  expect(queued[0].token).toBeNull();
  expect(queued[0].ticket).toMatch(/^[0-9]+$/);
  expect(queued[0].held_ms).toBeGreaterThan(0);
  const ticket = queued[0].ticket as string;

  await run(statements.heartbeat, [[ticket], 5_000]);
  expect(await run(statements.holder, ['k'])).toEqual([expect.objectContaining({ owner: 'o1' })]);
  const page = await run(statements.inspect, ['', null, 10]);
  expect(page).toEqual([expect.objectContaining({ name: 'k', owner: 'o1', token: granted[0].token, waiters: 1 })]);
  // A row when extended (its column is there to send the NOTIFY of a shorter lease); none for another owner.
  expect(await run(statements.extend, ['k', 'o1', 5_000, tables.raw])).toHaveLength(1);
  expect(await run(statements.extend, ['k', 'o2', 5_000, tables.raw])).toEqual([]);

  // Release notifies the table's channel with the first ticket in line.
  const listener = new pg.Client({ connectionString: POSTGRES_URL });
  await listener.connect();
  try {
    const heard = new Promise<string | undefined>((resolve) =>
      listener.on('notification', (msg) => resolve(msg.payload)),
    );
    await listener.query(postgresSql('listen', tables));
    await listener.query(postgresSql('alive', tables));
    const released = await run(statements.release, ['k', 'o1', tables.raw]);
    expect(released).toEqual([
      expect.objectContaining({ live: true, next: expect.stringMatching(new RegExp(`^${ticket},[0-9]+$`)) }),
    ]);
    expect(await heard).toMatch(new RegExp(`^${ticket},[0-9]+:k$`));
  } finally {
    await listener.end();
  }

  // The queued waiter is granted with its ticket, and leaves the queue in the same statement.
  const turn = await run(statements.acquire, ['k', 'o2', 10_000, ticket, null, 2, null]);
  expect(turn[0].token).toBe(Number(granted[0].token) + 1);
  // A retry of that statement (as after an error whose first attempt had committed) finds the lock its own.
  const retried = await run(statements.acquire, ['k', 'o2', 10_000, ticket, null, 2, null]);
  expect(retried[0]).toMatchObject({ token: null, mine: turn[0].token });
  // A waiter that leaves: its entry goes (answered in `gone`), and the next of its name is notified.
  const other = await run(statements.acquire, ['k', 'o3', 10_000, null, 5_000, 1, null]);
  expect(await run(statements.dequeue, [[other[0].ticket], tables.raw])).toEqual([
    { gone: [other[0].ticket], names: 1 },
  ]);
  expect(await run(statements.dequeue, [[other[0].ticket], tables.raw])).toEqual([{ gone: null, names: 0 }]);
  expect(await run(statements.prune, [60_000, 10])).toEqual([{ n: 0 }]);
  // The background pruning's batch: one simple-protocol query, its settings in the text.
  const batch = (await pool.query(
    postgresSql('prune-batch', tables, { olderThanMs: '60000', batch: '10', timeoutMs: '1000' }),
  )) as unknown as pg.QueryResult[];
  expect(batch[batch.length - 1].rows).toEqual([{ n: 0 }]);
});

test('a release grants the key to the first live waiter in line that gave its lease and fences: owner, lease, tokens, entry gone', async () => {
  const first = await run(statements.acquire, ['d', 'h', 10_000, null, null, 4, null]);
  const base = Number(first[0].token);
  // A waiter whose process died (its queue entry lapsed) is skipped; the next one is granted.
  const dead = await run(statements.acquire, ['d', 'dead', 10_000, null, 5_000, 2, 3_000]);
  await sql(`UPDATE ${tables.waiters} SET expires_at = clock_timestamp() - interval '1 second' WHERE ticket = $1`, [
    dead[0].ticket,
  ]);
  const next = await run(statements.acquire, ['d', 'next', 10_000, null, 5_000, 2, 3_000]);
  const last = await run(statements.acquire, ['d', 'last', 10_000, null, 5_000, 2, 3_000]);
  const released = await run(statements.release, ['d', 'h', tables.raw]);
  const [ticket, ms, token, at] = String(released[0].next).split(',');
  expect({ live: released[0].live, ticket, ms, token: Number(token) }).toEqual({
    live: true,
    ticket: next[0].ticket,
    ms: '3000',
    token: base + 4,
  });
  expect(Number(at)).toBeGreaterThan(Number(next[0].now_ms));
  const [row] = await sql<{ owner: string; left: number }>(
    `SELECT owner, extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS left FROM ${tables.locks} WHERE name = 'd'`,
  );
  expect(row.owner).toBe('next');
  expect(Number(row.left)).toBeGreaterThan(2_000);
  expect(Number(row.left)).toBeLessThanOrEqual(3_000);
  // Its entry went with the grant (a dequeue no longer finds it); its retry finds the key its own.
  expect((await run(statements.dequeue, [[next[0].ticket], tables.raw]))[0].gone).toBeNull();
  const retried = await run(statements.acquire, ['d', 'next', 10_000, next[0].ticket, null, 2, null]);
  expect(retried[0]).toMatchObject({ token: null, mine: base + 4 });
  expect(retried[0].mine_ms).toBeGreaterThan(2_000);
  // Not the holder: no grant, nothing changes.
  expect(await run(statements.release, ['d', 'last', tables.raw])).toEqual([]);
  // Its release grants the next with the next block of tokens.
  expect(String((await run(statements.release, ['d', 'next', tables.raw]))[0].next)).toMatch(
    new RegExp(`^${last[0].ticket},3000,${base + 6},`),
  );
  // A waiter that asks itself (an older instance's entry, or a shared or semaphore waiter) is notified, not granted.
  const old = await run(statements.acquire, ['d', 'old', 10_000, null, 5_000, 1, null]);
  const freed = await run(statements.release, ['d', 'last', tables.raw]);
  expect(freed[0].next).toMatch(new RegExp(`^${old[0].ticket},[0-9]+$`));
  expect(
    (await sql<{ owner: string | null }>(`SELECT owner FROM ${tables.locks} WHERE name = 'd'`))[0].owner,
  ).toBeNull();
  await run(statements.dequeue, [[old[0].ticket, dead[0].ticket], tables.raw]);
});

test('the statements of several holders run on the quoted table: shared holds and permits, extend, release, inspect, holder', async () => {
  const channel = tables.raw;
  const reader = await run(statements.acquirePermit, ['rw', 'r1', 10_000, null, null, 'shared', 1, channel]);
  expect(reader[0]).toMatchObject({ ticket: null, conflict: null, chained: 0 });
  expect(typeof reader[0].token).toBe('number');
  const second = await run(statements.acquirePermit, ['rw', 'r2', 10_000, null, null, 'shared', 1, channel]);
  expect(second[0].token).toBe(Number(reader[0].token) + 1);
  // A plain lock is the writer: it queues behind the readers.
  const writer = await run(statements.acquire, ['rw', 'w', 10_000, null, 5_000, 1, null]);
  expect(writer[0]).toMatchObject({ token: null, conflict: null, ticket: expect.stringMatching(/^[0-9]+$/) });
  expect(writer[0].held_ms).toBeGreaterThan(0);
  // A semaphore of another limit on the name clashes with the queued writer's limit 1.
  expect(
    (await run(statements.acquirePermit, ['rw', 'x', 10_000, null, 5_000, 'exclusive', 3, channel]))[0],
  ).toMatchObject({
    token: null,
    ticket: null,
    conflict: 1,
  });
  expect(await run(statements.extendPermit, ['rw', 'r1', 5_000, channel])).toHaveLength(1);
  expect(await run(statements.extendPermit, ['rw', 'nobody', 5_000, channel])).toEqual([]);
  expect(await run(statements.holder, ['rw'])).toEqual([
    expect.objectContaining({ owner: expect.stringMatching(/^r[12]$/) }),
  ]);
  const page = await run(statements.inspect, ['rw', null, 10]);
  expect(page.map((r) => [r.owner, r.mode, r.permits, r.waiters])).toEqual([
    ['r1', 'shared', 1, 1],
    ['r2', 'shared', 1, 1],
  ]);
  expect(await run(statements.releasePermit, ['rw', 'r1', channel])).toEqual([
    expect.objectContaining({ live: true, next: expect.stringMatching(/^[0-9]+,/) }),
  ]);
  expect(await run(statements.releasePermit, ['rw', 'r1', channel])).toEqual([]);
  expect(await run(statements.releasePermit, ['rw', 'r2', channel])).toHaveLength(1);
  const turn = await run(statements.acquire, ['rw', 'w', 10_000, writer[0].ticket, null, 1, null]);
  expect(turn[0].token).toBe(Number(second[0].token) + 1);
  // Permits: two of limit 2, then full.
  for (const owner of ['p1', 'p2'])
    expect(
      (await run(statements.acquirePermit, ['sem', owner, 10_000, null, null, 'exclusive', 2, channel]))[0].token,
    ).not.toBeNull();
  const full = await run(statements.acquirePermit, ['sem', 'p3', 10_000, null, 5_000, 'exclusive', 2, channel]);
  expect(full[0]).toMatchObject({ token: null, conflict: null, ticket: expect.stringMatching(/^[0-9]+$/) });
  expect(await run(statements.releasePermit, ['sem', 'p1', channel])).toHaveLength(1);
  const granted = await run(statements.acquirePermit, [
    'sem',
    'p3',
    10_000,
    full[0].ticket,
    null,
    'exclusive',
    2,
    channel,
  ]);
  expect(granted[0]).toMatchObject({ token: expect.any(Number), chained: 0 });
  expect(
    (await run(statements.acquirePermit, ['sem', 'p3', 10_000, full[0].ticket, null, 'exclusive', 2, channel]))[0],
  ).toMatchObject({
    token: null,
    mine: granted[0].token,
  });
});

test('extendMany extends, in one statement, each lock whose owner holds it, and answers the places of those it extended', async () => {
  await run(statements.acquire, ['m1', 'o1', 10_000, null, null, 1, null]);
  await run(statements.acquire, ['m2', 'o2', 10_000, null, null, 1, null]);
  const rows = await run(statements.extendMany, [
    ['m1', 'm2', 'm3', 'm2'],
    ['o1', 'o1', 'o1', 'o2'],
    [20_000, 20_000, 20_000, 20_000],
    tables.raw,
  ]);
  expect(rows.map((r) => r.i).sort()).toEqual([1, 4]);
  const left = await run(statements.holder, ['m1']);
  expect(Number(left[0].ms)).toBeGreaterThan(15_000);
  expect(Number((await run(statements.holder, ['m2']))[0].ms)).toBeGreaterThan(15_000);
  expect(await run(statements.extendMany, [['m1'], ['o2'], [20_000], tables.raw])).toEqual([]);
});

test('extendPermitMany extends, in one statement, the live holders entries of the owners asked, and answers their places', async () => {
  const channel = tables.raw;
  for (const [name, owner] of [
    ['pm1', 'a'],
    ['pm1', 'b'],
    ['pm2', 'c'],
  ]) {
    expect(
      (await run(statements.acquirePermit, [name, owner, 10_000, null, null, 'exclusive', 3, channel]))[0].token,
    ).not.toBeNull();
  }
  expect(
    (await run(statements.acquirePermit, ['pm3', 'r', 200, null, null, 'shared', 1, channel]))[0].token,
  ).not.toBeNull();
  await sleep(400); // r's lease has ended
  const rows = await run(statements.extendPermitMany, [
    ['pm1', 'pm2', 'pm1', 'pm2', 'pm3'],
    ['b', 'c', 'a', 'a', 'r'],
    [60_000, 60_000, 60_000, 60_000, 60_000],
    channel,
  ]);
  expect(rows.map((r) => r.i).sort()).toEqual([1, 2, 3]);
  const page = await run(statements.inspect, ['pm', null, 10]);
  const left = Object.fromEntries(page.map((r) => [`${r.name} ${r.owner}`, Number(r.remaining_ms)]));
  expect(left['pm1 a']).toBeGreaterThan(50_000);
  expect(left['pm1 b']).toBeGreaterThan(50_000);
  expect(left['pm2 c']).toBeGreaterThan(50_000);
  expect(left['pm3 r']).toBeUndefined();
  expect(await run(statements.extendPermitMany, [['pm1'], ['nobody'], [60_000], channel])).toEqual([]);
});
