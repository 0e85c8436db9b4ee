/**
 * The MySQL provider prunes by itself (the `prune` option): a table with old
 * rows is pruned without a call from the app; live locks, group holders and
 * names with live waiters are untouched, dead waiters' entries go; two
 * instances never prune at the same time; `prune: false` leaves the rows;
 * close() waits for the batch in progress and ends the pruning; a failing run
 * is one warning, never an error in the app; tables that migrations own are
 * pruned too.
 * Against the real MariaDB.
 */
import mysql from 'mysql2';
import { MysqlLockProvider } from '../../../lib/stores/mysql/index.js';
import { mysqlLockPruneSettings } from '../../../lib/stores/mysql/mysql-lock-pruner.js';
import { dropMysqlLockTables, MYSQL_URL, mysqlQuery, uniqueMysqlTable } from '../../support/mysql-test-env.js';
import { sleep } from '../../support/sleep.js';
import * as pruning from '../../support/background-prune.js';

/** Creates the tables as a migration would. */
const createTables = async (table: string): Promise<void> => {
  for (const statement of MysqlLockProvider.schemaSql(table)
    .split(/;\n/)
    .filter((s) => s.trim() !== ''))
    await mysqlQuery(statement);
};

/** Inserts `count` rows named `<prefix><i>` whose lease ended two hours ago and whose counters started three hours ago. */
const insertOld = (table: string, prefix: string, count: number) =>
  mysqlQuery(
    `INSERT INTO \`${table}\` (name, owner, fencing_token, expires_at)
     SELECT CONCAT(?, seq), NULL, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) - 3 * 3600 * 1000000,
       UTC_TIMESTAMP(6) - INTERVAL 2 HOUR
     FROM seq_1_to_${count}`,
    [prefix],
  );

const countRows = async (table: string, prefix: string): Promise<number> =>
  Number(
    (
      await mysqlQuery<Array<{ n: number }>>(`SELECT count(*) AS n FROM \`${table}\` WHERE LEFT(name, ?) = ?`, [
        prefix.length,
        prefix,
      ])
    )[0].n,
  );

/**
 * A trigger on the lock table that sleeps `sleepS` s for every row deleted: a batch of 1 000 rows takes 1 000 times
 * that. (The sleep names the table, so the process list shows whose it is.)
 */
async function slowDeletes(table: string, sleepS: number): Promise<void> {
  await mysqlQuery(
    `CREATE TRIGGER \`${table}_slow\` AFTER DELETE ON \`${table}\` FOR EACH ROW DO SLEEP(${sleepS} + 0 * LENGTH('${table}'))`,
  );
}

/** A trigger on the lock table that makes every delete fail with "no deletes here". */
const failDeletes = (table: string) =>
  mysqlQuery(
    `CREATE TRIGGER \`${table}_failing\` BEFORE DELETE ON \`${table}\` FOR EACH ROW
       SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no deletes here'`,
  );

/** How many other connections run a background pruning batch on `table` now (in its statement, or in the trigger). */
const pruningNow = async (table: string): Promise<number> =>
  (
    await mysqlQuery<unknown[]>(
      'SELECT 1 FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND (info LIKE ? OR info LIKE ?)',
      [`DELETE l FROM JSON_TABLE%${table}%`, `DO SLEEP(%${table}%`],
    )
  ).length;

const store: pruning.PruneTestStore<MysqlLockProvider> = {
  uniqueTable: uniqueMysqlTable,
  provider: (options) => new MysqlLockProvider({ connection: MYSQL_URL, ...options }),
  createTables,
  insertOld,
  countRows,
  dropAll: dropMysqlLockTables,
};

const logger = pruning.recordLogs();

describe('a provider with background pruning', () => {
  const pruned = pruning.prunedTable(store, 'autoprune');
  const { table } = pruned;

  test('prunes a table with old rows without a call from the app, and leaves live locks, group holders and waiters alone', async () => {
    const { waiter } = await pruning.oldRowsAndLiveLocks(store, pruned);
    await pruning.eventually(
      async () => (await mysqlQuery<unknown[]>(`SELECT 1 FROM \`${table}_waiters\` WHERE name = 'held'`)).length === 1,
    );
    // A row that looks old (lease ended two hours ago, counter behind) but a live waiter of another process is
    // queued on it; and the entry of a waiter whose process died (its lease ended ten minutes ago).
    await insertOld(table, 'aged-awaited', 1);
    await mysqlQuery(
      `INSERT INTO \`${table}_waiters\` (name, owner, expires_at) VALUES
         ('aged-awaited1', 'x', UTC_TIMESTAMP(6) + INTERVAL 10 MINUTE),
         ('dead', 'd', UTC_TIMESTAMP(6) - INTERVAL 10 MINUTE)`,
    );

    await pruning.untilPruned(store, table);
    await pruning.eventually(
      async () => (await mysqlQuery<unknown[]>(`SELECT 1 FROM \`${table}_waiters\` WHERE owner = 'd'`)).length === 0,
    );

    const names = (await mysqlQuery<Array<{ name: Buffer }>>(`SELECT name FROM \`${table}\` ORDER BY name`)).map((r) =>
      String(r.name),
    );
    expect(names).toEqual(['aged-awaited1', 'held', 'permits', 'recent', 'shared']);
    const waiters = await mysqlQuery<Array<{ name: Buffer; owner: Buffer }>>(
      `SELECT name, owner FROM \`${table}_waiters\` ORDER BY name`,
    );
    expect(waiters.map((w) => [String(w.name), String(w.owner)])).toEqual([
      ['aged-awaited1', 'x'],
      ['held', 'w'],
    ]);
    await pruning.eventually(async () => logger.lines('debug', `of lock table "${table}"`).length > 0); // logged as the run ends
    await pruning.expectLocksStillWork(pruned.provider, waiter);
  }, 60_000);
});

describe('two instances on one table', () => {
  const { table, a, b } = pruning.twoPruningProviders(store, 'autoprune2');

  test('never prune at the same time', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 4_000); // four batches, each kept about 0.5 s by the trigger
    await slowDeletes(table, 0.0005);
    await Promise.all([a.ping(), b.ping()]); // both may prune from now on

    let most = 0;
    await pruning.eventually(async () => {
      most = Math.max(most, await pruningNow(table));
      return (await countRows(table, 'old:')) === 0;
    });
    expect(most).toBe(1);
  }, 60_000);
});

test('the prune option: on by default (an hour, about every five minutes), true the same, false off, each setting alone', () => {
  pruning.expectPruneSettings(mysqlLockPruneSettings);
  expect(() => new MysqlLockProvider({ connection: MYSQL_URL, prune: { olderThanMs: 1_000 } })).toThrow(
    /MysqlLockProvider.*prune\.olderThanMs/,
  );
  expect(() => new MysqlLockProvider({ connection: MYSQL_URL, prune: 'daily' as never })).toThrow(
    /MysqlLockProvider.*prune/,
  );
});

pruning.describePruneOff(store);
pruning.describeFailingRun(store, logger, failDeletes);

describe('close()', () => {
  const table = uniqueMysqlTable('pruneclose');
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 3 });
  const provider = new MysqlLockProvider({ connection: pool, tableName: table, ...pruning.FAST_PRUNE });
  afterAll(async () => {
    await provider.close();
    await new Promise((resolve) => pool.end(resolve));
    await dropMysqlLockTables(table);
  });

  test('waits for the batch in progress and starts no other', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 3_000); // three batches
    await slowDeletes(table, 0.001);
    await provider.ping();
    // A batch is running (slowed by the trigger) when close() is called.
    await pruning.eventually(async () => (await pruningNow(table)) > 0);
    await provider.close();
    // The pool is the app's (not ended by close): only waiting for the batch made its commit visible by now.
    expect(await countRows(table, 'old:')).toBe(2_000);
    await sleep(2_500);
    expect(await countRows(table, 'old:')).toBe(2_000);
    expect(logger.lines('warn', table)).toEqual([]);
  }, 60_000);
});

describe('tables that migrations own (createTable: false)', () => {
  const migrated = pruning.prunedTable(store, 'prunemig', { createTable: false, ...pruning.FAST_PRUNE });

  test('are pruned too', async () => {
    await pruning.expectPrunedAfterPing(store, migrated);
    expect(logger.lines('warn', migrated.table)).toEqual([]);
  }, 60_000);
});
