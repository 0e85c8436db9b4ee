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
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { postgresLockPruneSettings } from '../../../lib/stores/postgres/postgres-lock-pruner.js';
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';
import { bootLockApp } from '../../support/boot-lock-app.js';
import * as pruning from '../../support/background-prune.js';

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

/** A trigger on the lock table that makes every delete fail with "no deletes here". */
async function failDeletes(table: string): Promise<void> {
  await sql(
    `CREATE FUNCTION "${table}_failing"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no deletes here'; END $$`,
  );
  await sql(`CREATE TRIGGER failing BEFORE DELETE ON "${table}" FOR EACH ROW EXECUTE FUNCTION "${table}_failing"()`);
}

async function dropAll(table: string): Promise<void> {
  await dropLockTables(table);
  await sql(`DROP TABLE IF EXISTS "${table}_log"`);
  await sql(`DROP FUNCTION IF EXISTS "${table}_logged"(), "${table}_failing"()`);
}

const store: pruning.PruneTestStore<PostgresLockProvider> = {
  uniqueTable,
  provider: (options) => new PostgresLockProvider({ connection: POSTGRES_URL, ...options }),
  createTables,
  insertOld,
  countRows,
  dropAll,
};

const logger = pruning.recordLogs();

describe('a provider with background pruning', () => {
  const pruned = pruning.prunedTable(store, 'autoprune');
  const { table } = pruned;

  test('prunes a table with old rows without a call from the app, and leaves live locks, group holders and waiters alone', async () => {
    const { waiter } = await pruning.oldRowsAndLiveLocks(store, pruned);
    await pruning.eventually(
      async () => (await sql(`SELECT 1 FROM "${table}_waiters" WHERE name = 'held'`)).length === 1,
    );
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

    await pruning.untilPruned(store, table);

    const names = (await sql<{ name: string }>(`SELECT name FROM "${table}" ORDER BY name`)).map((r) => r.name);
    expect(names).toEqual(['aged-awaited1', 'aged-group1', 'held', 'permits', 'recent', 'shared']);
    expect(await sql(`SELECT name, owner FROM "${table}_waiters" ORDER BY name`)).toEqual([
      { name: 'aged-awaited1', owner: 'x' },
      { name: 'held', owner: 'w' },
    ]);
    expect(logger.lines('debug', `of lock table "${table}"`).length).toBeGreaterThan(0);
    await pruning.expectLocksStillWork(pruned.provider, waiter);
  }, 60_000);
});

describe('two instances on one table', () => {
  const { table, a, b } = pruning.twoPruningProviders(store, 'autoprune2');

  test('never prune at the same time', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 8_000); // eight batches, each kept 0.3 s longer by the trigger
    await logDeletes(table, 0.3);
    await Promise.all([a.ping(), b.ping()]); // both start their pruning now

    await pruning.untilPruned(store, table);

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

test('the prune option: on by default (an hour, about every five minutes), true the same, false off, each setting alone', () =>
  pruning.expectPruneSettings(postgresLockPruneSettings));

pruning.describePruneOff(store);
pruning.describeFailingRun(store, logger, failDeletes);

describe('close()', () => {
  const table = uniqueTable('pruneclose');
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 3 });
  const provider = new PostgresLockProvider({ connection: pool, tableName: table, ...pruning.FAST_PRUNE });
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
    await pruning.eventually(
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

describe('tables that migrations own (createTable: false)', () => {
  const migrated = pruning.prunedTable(store, 'prunemig', { createTable: false, ...pruning.FAST_PRUNE });

  test('are pruned too', () => pruning.expectPrunedAfterPing(store, migrated), 60_000);
});

describe('through LockModule', () => {
  const table = uniqueTable('prunemod');
  afterAll(() => dropAll(table));

  test('the module passes the prune option on, and its boot check starts the pruning', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 50);
    const { app } = await bootLockApp({
      postgres: { connection: POSTGRES_URL, tableName: table, ...pruning.FAST_PRUNE },
    });
    try {
      await pruning.untilPruned(store, table);
    } finally {
      await app.close();
      Logger.overrideLogger(logger); // the app set its own
    }
  }, 60_000);
});
