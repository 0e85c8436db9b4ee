/**
 * The provider prunes by itself (the `prune` option): a table with old rows
 * is pruned without a call from the app; live locks, rows with group holders
 * and names with waiters are untouched; two instances never prune at the same
 * time; `prune: false` leaves the rows; close() waits for the batch in
 * progress and ends the pruning; a failing run is one warning, never an error
 * in the app; it works on tables that migrations own (`createTable: false`).
 */
import { Logger } from '@nestjs/common';
import pg from 'pg';
import { PostgresLockProvider, type PostgresLockProviderOptions } from '../../../lib/stores/postgres/index.js';
import { postgresLockPruneSettings } from '../../../lib/stores/postgres/postgres-lock-pruner.js';
import { dropLockTables, POSTGRES_URL, sql, twoProcesses, uniqueTable } from '../../support/pg-test-env.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { sleep } from '../../support/sleep.js';
import { bootLockApp } from '../../support/boot-lock-app.js';

/** Short interval for the tests (each wait is drawn between 0.75 s and 1.25 s). */
const FAST = { prune: { everyMs: 1_000 } } as const;

/** Creates the tables as a migration would (no provider call yet, so no pruning is scheduled before the rows are in). */
const createTables = (table: string) => sql(PostgresLockProvider.schemaSql(table));

/** Inserts `count` rows named `<prefix><i>` whose lease ended two hours ago and whose counters started three hours ago. */
const insertOld = (table: string, prefix: string, count: number) =>
  sql(
    `INSERT INTO "${table}" (name, owner, fencing_token, expires_at)
     SELECT $1 || i, NULL, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - 3 * 3600 * 1000000::bigint, clock_timestamp() - interval '2 hours'
     FROM generate_series(1, $2::int) AS i`,
    [prefix, count],
  );

const countRows = async (table: string, prefix: string): Promise<number> =>
  Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM "${table}" WHERE starts_with(name, $1)`, [prefix]))[0].n);

/** Polls `check` until it is true (or fails after `ms`: wide, the machine may be loaded). */
async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(100);
  }
}

/** A trigger on the lock table that logs every statement that deleted rows: backend, then when it ended, after sleeping `sleepS` s within it. */
async function logDeletes(table: string, sleepS: number): Promise<void> {
  await sql(`CREATE TABLE "${table}_log" (pid int, started timestamptz, ended timestamptz, n int)`);
  await sql(`CREATE FUNCTION "${table}_logged"() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE started timestamptz := clock_timestamp(); n int;
    BEGIN
      SELECT count(*) INTO n FROM gone;
      IF n > 0 THEN
        PERFORM pg_sleep(${sleepS});
        INSERT INTO "${table}_log" VALUES (pg_backend_pid(), started, clock_timestamp(), n);
      END IF;
      RETURN NULL;
    END $$`);
  await sql(
    `CREATE TRIGGER logged AFTER DELETE ON "${table}" REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION "${table}_logged"()`,
  );
}

async function dropAll(table: string): Promise<void> {
  await dropLockTables(table);
  await sql(`DROP TABLE IF EXISTS "${table}_log"`);
  await sql(`DROP FUNCTION IF EXISTS "${table}_logged"(), "${table}_failing"()`);
}

const logger = new RecordingLogger();
beforeAll(() => Logger.overrideLogger(logger));
afterAll(() => Logger.overrideLogger(true));

describe('a provider with background pruning', () => {
  const table = uniqueTable('autoprune');
  const provider = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, ...FAST });
  afterAll(async () => {
    await provider.close();
    await dropAll(table);
  });

  test('prunes a table with old rows without a call from the app, and leaves live locks, group holders and waiters alone', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 2_500); // more than one background batch
    // A held lock, a shared hold and a semaphore permit, a released lock of a moment ago.
    expect(await provider.acquire({ key: 'held', owner: 'a', ttl: 60_000, wait: false })).not.toBeNull();
    expect(
      await provider.acquire({ key: 'shared', owner: 'r', ttl: 60_000, wait: false, mode: 'shared' }),
    ).not.toBeNull();
    expect(await provider.acquire({ key: 'permits', owner: 'p', ttl: 60_000, wait: false, limit: 3 })).not.toBeNull();
    await provider.acquire({ key: 'recent', owner: 'a', ttl: 60_000, wait: false });
    await provider.release('recent', 'a');
    // A waiter queued on the held lock.
    const waiter = provider.acquire({ key: 'held', owner: 'w', ttl: 60_000, wait: true });
    await eventually(async () => (await sql(`SELECT 1 FROM "${table}_waiters" WHERE name = 'held'`)).length === 1);
    // Rows that look old (lease ended two hours ago, counter behind) but are in use: a live group holder the row's
    // own end does not cover, and a live waiter of another process queued on the name.
    await insertOld(table, 'aged-group', 1);
    await sql(
      `UPDATE "${table}" SET holders = jsonb_build_array(jsonb_build_object('o', 'g', 't', fencing_token, 'e', extract(epoch FROM clock_timestamp()) * 1000 + 600000, 's', 0, 'm', 'shared')) WHERE name = 'aged-group1'`,
    );
    await insertOld(table, 'aged-awaited', 1);
    await sql(
      `INSERT INTO "${table}_waiters" (name, owner, expires_at) VALUES ('aged-awaited1', 'x', clock_timestamp() + interval '10 minutes')`,
    );

    await eventually(async () => (await countRows(table, 'old:')) === 0);

    const names = (await sql<{ name: string }>(`SELECT name FROM "${table}" ORDER BY name`)).map((r) => r.name);
    expect(names).toEqual(['aged-awaited1', 'aged-group1', 'held', 'permits', 'recent', 'shared']);
    expect(await sql(`SELECT name, owner FROM "${table}_waiters" ORDER BY name`)).toEqual([
      { name: 'aged-awaited1', owner: 'x' },
      { name: 'held', owner: 'w' },
    ]);
    expect(logger.lines('debug', `of lock table "${table}"`).length).toBeGreaterThan(0);
    // The locks still work: the held one is held, and its waiter gets it when released.
    expect(await provider.acquire({ key: 'held', owner: 'b', ttl: 60_000, wait: false })).toBeNull();
    expect(await provider.release('held', 'a')).toBe(true);
    expect(await waiter).not.toBeNull();
    expect(await provider.release('held', 'w')).toBe(true);
  }, 60_000);
});

describe('two instances on one table', () => {
  const table = uniqueTable('autoprune2');
  const { a, b } = twoProcesses(table, FAST);
  afterAll(() => dropAll(table));

  test('never prune at the same time', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 8_000); // eight batches, each kept 0.3 s longer by the trigger
    await logDeletes(table, 0.3);
    await Promise.all([a.ping(), b.ping()]); // both start their pruning now

    await eventually(async () => (await countRows(table, 'old:')) === 0);

    const log = await sql<{ pid: number; started: Date; ended: Date; n: number }>(
      `SELECT * FROM "${table}_log" ORDER BY started`,
    );
    expect(log.reduce((sum, row) => sum + row.n, 0)).toBe(8_000);
    for (let i = 1; i < log.length; i++) {
      // Each batch's window (inside its transaction, after its deletes) ends before the next one starts.
      expect(log[i].started.getTime()).toBeGreaterThanOrEqual(log[i - 1].ended.getTime());
    }
  }, 60_000);
});

test('the prune option: on by default (an hour, about every five minutes), true the same, false off, each setting alone', () => {
  const defaults = { olderThanMs: 3_600_000, everyMs: 300_000 };
  expect(postgresLockPruneSettings(undefined)).toEqual(defaults);
  expect(postgresLockPruneSettings(true)).toEqual(defaults);
  expect(postgresLockPruneSettings({})).toEqual(defaults);
  expect(postgresLockPruneSettings(false)).toBeNull();
  expect(postgresLockPruneSettings({ olderThanMs: 86_400_000 })).toEqual({ olderThanMs: 86_400_000, everyMs: 300_000 });
  expect(postgresLockPruneSettings({ everyMs: 60_000 })).toEqual({ olderThanMs: 3_600_000, everyMs: 60_000 });
});

describe('prune: false', () => {
  const off = uniqueTable('pruneoff');
  const on = uniqueTable('pruneon');
  const providers = [
    new PostgresLockProvider({ connection: POSTGRES_URL, tableName: off, prune: false }),
    new PostgresLockProvider({ connection: POSTGRES_URL, tableName: on, ...FAST }),
  ];
  afterAll(async () => {
    await Promise.all(providers.map((p) => p.close()));
    await Promise.all([dropAll(off), dropAll(on)]);
  });

  test('leaves the old rows, while a provider with pruning on prunes its own meanwhile; prune() still works', async () => {
    await Promise.all([createTables(off), createTables(on)]);
    await Promise.all([insertOld(off, 'old:', 100), insertOld(on, 'old:', 100)]);
    await Promise.all(providers.map((p) => p.ping()));
    await eventually(async () => (await countRows(on, 'old:')) === 0);
    await sleep(2_000);
    expect(await countRows(off, 'old:')).toBe(100);
    expect(await providers[0].prune()).toBe(100);
  }, 60_000);
});

describe('close()', () => {
  const table = uniqueTable('pruneclose');
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 3 });
  const provider = new PostgresLockProvider({ connection: pool, tableName: table, ...FAST });
  afterAll(async () => {
    await provider.close();
    await pool.end();
    await dropAll(table);
  });

  test('waits for the batch in progress and starts no other', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 3_000); // three batches
    await logDeletes(table, 1);
    await provider.ping();
    // A batch is running (sleeping in the trigger) when close() is called.
    await eventually(
      async () =>
        (
          await sql(
            `SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND position($1 IN query) > 0`,
            [`nest-lock prune ${table}`],
          )
        ).length > 0,
    );
    await provider.close();
    // The pool is the app's (not ended by close): only waiting for the batch made its commit visible by now.
    expect(await sql(`SELECT n FROM "${table}_log"`)).toEqual([{ n: 1_000 }]);
    await sleep(2_500);
    expect(await countRows(table, 'old:')).toBe(2_000);
    expect(logger.lines('warn', table)).toEqual([]);
  }, 60_000);
});

describe('a failing run', () => {
  const table = uniqueTable('prunefail');
  const provider = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, ...FAST });
  afterAll(async () => {
    await provider.close();
    await dropAll(table);
  });

  test('is logged as one warning (at most once an hour), never thrown into the app; locks go on', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 10);
    await sql(
      `CREATE FUNCTION "${table}_failing"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no deletes here'; END $$`,
    );
    await sql(`CREATE TRIGGER failing BEFORE DELETE ON "${table}" FOR EACH ROW EXECUTE FUNCTION "${table}_failing"()`);
    await provider.ping();
    await eventually(async () => logger.lines('warn', table).length > 0);
    await sleep(3_500); // about three more runs, all failing
    const warnings = logger.lines('warn', table);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`Background pruning of lock table "${table}" failed .*no deletes here`));
    expect(await countRows(table, 'old:')).toBe(10);
    expect(await provider.acquire({ key: 'k', owner: 'a', ttl: 10_000, wait: false })).not.toBeNull();
    expect(await provider.release('k', 'a')).toBe(true);
  }, 60_000);
});

describe('tables that migrations own (createTable: false)', () => {
  const table = uniqueTable('prunemig');
  const options: PostgresLockProviderOptions = {
    connection: POSTGRES_URL,
    tableName: table,
    createTable: false,
    ...FAST,
  };
  const provider = new PostgresLockProvider(options);
  afterAll(async () => {
    await provider.close();
    await dropAll(table);
  });

  test('are pruned too', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 50);
    await provider.ping();
    await eventually(async () => (await countRows(table, 'old:')) === 0);
  }, 60_000);
});

describe('through LockModule', () => {
  const table = uniqueTable('prunemod');
  afterAll(() => dropAll(table));

  test('the module passes the prune option on, and its boot check starts the pruning', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 50);
    const { app } = await bootLockApp({ postgres: { connection: POSTGRES_URL, tableName: table, ...FAST } });
    try {
      await eventually(async () => (await countRows(table, 'old:')) === 0);
    } finally {
      await app.close();
      Logger.overrideLogger(logger); // the app set its own
    }
  }, 60_000);
});
