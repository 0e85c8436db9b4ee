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
import { Logger } from '@nestjs/common';
import mysql from 'mysql2';
import { MysqlLockProvider, type MysqlLockProviderOptions } from '../../../lib/stores/mysql/index.js';
import { mysqlLockPruneSettings } from '../../../lib/stores/mysql/mysql-lock-pruner.js';
import { dropMysqlLockTables, MYSQL_URL, mysqlQuery, uniqueMysqlTable } from '../../support/mysql-test-env.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { sleep } from '../../support/sleep.js';

/** Short interval for the tests (each wait is drawn between 0.75 s and 1.25 s). */
const FAST = { prune: { everyMs: 1_000 } } as const;

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

/** Polls `check` until it is true (or fails after `ms`: wide, the machine may be loaded). */
async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(100);
  }
}

/**
 * A trigger on the lock table that sleeps `sleepS` s for every row deleted: a batch of 1 000 rows takes 1 000 times
 * that. (The sleep names the table, so the process list shows whose it is.)
 */
async function slowDeletes(table: string, sleepS: number): Promise<void> {
  await mysqlQuery(
    `CREATE TRIGGER \`${table}_slow\` AFTER DELETE ON \`${table}\` FOR EACH ROW DO SLEEP(${sleepS} + 0 * LENGTH('${table}'))`,
  );
}

/** How many other connections run a background pruning batch on `table` now (in its statement, or in the trigger). */
const pruningNow = async (table: string): Promise<number> =>
  (
    await mysqlQuery<unknown[]>(
      'SELECT 1 FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND (info LIKE ? OR info LIKE ?)',
      [`DELETE l FROM JSON_TABLE%${table}%`, `DO SLEEP(%${table}%`],
    )
  ).length;

const dropAll = (table: string): Promise<void> => dropMysqlLockTables(table);

const logger = new RecordingLogger();
beforeAll(() => Logger.overrideLogger(logger));
afterAll(() => Logger.overrideLogger(true));

describe('a provider with background pruning', () => {
  const table = uniqueMysqlTable('autoprune');
  const provider = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, ...FAST });
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
    await eventually(
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

    await eventually(async () => (await countRows(table, 'old:')) === 0);
    await eventually(
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
    await eventually(async () => logger.lines('debug', `of lock table "${table}"`).length > 0); // logged as the run ends
    // The locks still work: the held one is held, and its waiter gets it when released.
    expect(await provider.acquire({ key: 'held', owner: 'b', ttl: 60_000, wait: false })).toBeNull();
    expect(await provider.release('held', 'a')).toBe(true);
    expect(await waiter).not.toBeNull();
    expect(await provider.release('held', 'w')).toBe(true);
  }, 60_000);
});

describe('two instances on one table', () => {
  const table = uniqueMysqlTable('autoprune2');
  const a = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, ...FAST });
  const b = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, ...FAST });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await dropAll(table);
  });

  test('never prune at the same time', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 4_000); // four batches, each kept about 0.5 s by the trigger
    await slowDeletes(table, 0.0005);
    await Promise.all([a.ping(), b.ping()]); // both may prune from now on

    let most = 0;
    await eventually(async () => {
      most = Math.max(most, await pruningNow(table));
      return (await countRows(table, 'old:')) === 0;
    });
    expect(most).toBe(1);
  }, 60_000);
});

test('the prune option: on by default (an hour, about every five minutes), true the same, false off, each setting alone', () => {
  const defaults = { olderThanMs: 3_600_000, everyMs: 300_000 };
  expect(mysqlLockPruneSettings(undefined)).toEqual(defaults);
  expect(mysqlLockPruneSettings(true)).toEqual(defaults);
  expect(mysqlLockPruneSettings({})).toEqual(defaults);
  expect(mysqlLockPruneSettings(false)).toBeNull();
  expect(mysqlLockPruneSettings({ olderThanMs: 86_400_000 })).toEqual({ olderThanMs: 86_400_000, everyMs: 300_000 });
  expect(mysqlLockPruneSettings({ everyMs: 60_000 })).toEqual({ olderThanMs: 3_600_000, everyMs: 60_000 });
  expect(() => new MysqlLockProvider({ connection: MYSQL_URL, prune: { olderThanMs: 1_000 } })).toThrow(
    /MysqlLockProvider.*prune\.olderThanMs/,
  );
  expect(() => new MysqlLockProvider({ connection: MYSQL_URL, prune: 'daily' as never })).toThrow(
    /MysqlLockProvider.*prune/,
  );
});

describe('prune: false', () => {
  const off = uniqueMysqlTable('pruneoff');
  const on = uniqueMysqlTable('pruneon');
  const providers = [
    new MysqlLockProvider({ connection: MYSQL_URL, tableName: off, prune: false }),
    new MysqlLockProvider({ connection: MYSQL_URL, tableName: on, ...FAST }),
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
  const table = uniqueMysqlTable('pruneclose');
  const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 3 });
  const provider = new MysqlLockProvider({ connection: pool, tableName: table, ...FAST });
  afterAll(async () => {
    await provider.close();
    await new Promise((resolve) => pool.end(resolve));
    await dropAll(table);
  });

  test('waits for the batch in progress and starts no other', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 3_000); // three batches
    await slowDeletes(table, 0.001);
    await provider.ping();
    // A batch is running (slowed by the trigger) when close() is called.
    await eventually(async () => (await pruningNow(table)) > 0);
    await provider.close();
    // The pool is the app's (not ended by close): only waiting for the batch made its commit visible by now.
    expect(await countRows(table, 'old:')).toBe(2_000);
    await sleep(2_500);
    expect(await countRows(table, 'old:')).toBe(2_000);
    expect(logger.lines('warn', table)).toEqual([]);
  }, 60_000);
});

describe('a failing run', () => {
  const table = uniqueMysqlTable('prunefail');
  const provider = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, ...FAST });
  afterAll(async () => {
    await provider.close();
    await dropAll(table);
  });

  test('is logged as one warning (at most once an hour), never thrown into the app; locks go on', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 10);
    await mysqlQuery(
      `CREATE TRIGGER \`${table}_failing\` BEFORE DELETE ON \`${table}\` FOR EACH ROW
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no deletes here'`,
    );
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
  const table = uniqueMysqlTable('prunemig');
  const options: MysqlLockProviderOptions = { connection: MYSQL_URL, tableName: table, createTable: false, ...FAST };
  const provider = new MysqlLockProvider(options);
  afterAll(async () => {
    await provider.close();
    await dropAll(table);
  });

  test('are pruned too', async () => {
    await createTables(table);
    await insertOld(table, 'old:', 50);
    await provider.ping();
    await eventually(async () => (await countRows(table, 'old:')) === 0);
    expect(logger.lines('warn', table)).toEqual([]);
  }, 60_000);
});
