/**
 * MysqlLockProvider on its own: a server that is not there, connections the
 * server kills, replicas starting at once on an empty database, the schema
 * for migrations, options that can never work, and whose pool close() ends.
 */
import mysql from 'mysql2';
import mysqlPromise from 'mysql2/promise';
import { LockManager, LockOptionsError, createLockProvider } from '../../../lib/index.js';
import { MysqlLockProvider } from '../../../lib/stores/mysql/index.js';
import { dropMysqlLockTables, MYSQL_URL, mysqlQuery, uniqueMysqlTable } from '../../support/mysql-test-env.js';
import { sleep } from '../../support/sleep.js';
import { describeUnreachableStore, storeErrorWithin } from '../../support/unreachable-store.js';

const table = uniqueMysqlTable('store');
afterAll(() => dropMysqlLockTables(table));

const tablesNamed = async (name: string): Promise<string[]> =>
  (
    await mysqlQuery<Array<{ t: string }>>(
      'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
      [`${name}%`],
    )
  )
    .map((r) => r.t)
    .sort();

describeUnreachableStore(
  'MysqlLockProvider',
  (port, commandTimeout) =>
    new MysqlLockProvider({ connection: `mysql://root@127.0.0.1:${port}/test`, tableName: table, commandTimeout }),
  {
    closed: /MySQL at 127\.0\.0\.1:\d+ refused the connection \(ECONNREFUSED\)/,
    silent: /MySQL at 127\.0\.0\.1:\d+ did not answer within 1000 ms/,
  },
);

describe('MysqlLockProvider against a live database', () => {
  test('KILL of its connections mid-hold: the next renewal goes over a new connection, and the handle stays held', async () => {
    const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 3 });
    const ids = new Set<number>();
    pool.on('connection', (c) => {
      ids.add(c.threadId);
      c.on('error', () => undefined);
    });
    const manager = new LockManager({
      provider: new MysqlLockProvider({ connection: pool, tableName: table, commandTimeout: 1_000 }),
    });
    const lock = await manager.acquire('killed', { ttl: 1_500 });
    for (let i = 0; i < 3; i++) {
      await sleep(600);
      expect(ids.size).toBeGreaterThan(0); // a renewal opened a connection since the last kill
      for (const id of ids) await mysqlQuery(`KILL ${id}`).catch(() => undefined);
      ids.clear();
    }
    await sleep(1_500); // past the lease: only renewals after the kills kept it
    expect(lock.held).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    const other = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table });
    expect(await other.acquire({ key: 'lock:killed', owner: 'thief', ttl: 1_000, wait: false })).toBeNull();
    expect(await lock.release()).toBe(true);
    await Promise.all([manager.close(), other.close()]);
    await pool.promise().end();
  }, 20_000);

  test('replicas starting at once on an empty database: the tables are created once, every replica locks', async () => {
    const fresh = uniqueMysqlTable('boot');
    const replicas = Array.from(
      { length: 6 },
      () => new MysqlLockProvider({ connection: MYSQL_URL, tableName: fresh }),
    );
    try {
      const grants = await Promise.all(
        replicas.map((p, i) => p.acquire({ key: `lock:${i}`, owner: `o${i}`, ttl: 5_000, wait: false })),
      );
      expect(grants.every((g) => g !== null)).toBe(true);
      expect(await tablesNamed(fresh)).toEqual([fresh, `${fresh}_waiters`]);
      // One lock, one holder, whichever replica asks.
      const same = await Promise.all(
        replicas.map((p, i) => p.acquire({ key: 'lock:one', owner: `x${i}`, ttl: 5_000, wait: false })),
      );
      expect(same.filter((g) => g !== null)).toHaveLength(1);
    } finally {
      await Promise.all(replicas.map((p) => p.close()));
      await dropMysqlLockTables(fresh);
    }
  }, 30_000);

  test('a start with the tables in place runs no DDL (its connection ran no CREATE TABLE); one on missing tables creates both', async () => {
    const fresh = uniqueMysqlTable('ddl');
    const creates = async (pool: mysql.Pool): Promise<number> => {
      const [rows] = await pool.promise().query<mysql.RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Com_create_table'");
      return Number(rows[0].Value);
    };
    // One connection each: the session counter is the provider's own.
    const first = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
    const second = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 1 });
    try {
      const a = new MysqlLockProvider({ connection: first, tableName: fresh });
      expect(await a.acquire({ key: 'lock:a', owner: 'a', ttl: 1_000, wait: false })).not.toBeNull();
      expect(await creates(first)).toBe(2);
      const b = new MysqlLockProvider({ connection: second, tableName: fresh });
      expect(await b.acquire({ key: 'lock:b', owner: 'b', ttl: 1_000, wait: false })).not.toBeNull();
      expect(await creates(second)).toBe(0);
      await Promise.all([a.close(), b.close()]);
    } finally {
      await Promise.all([first.promise().end(), second.promise().end()]);
      await dropMysqlLockTables(fresh);
    }
  }, 20_000);

  test('prune() deletes the rows of names unused for longer than its age, never a held one, and a name pruned comes back with greater tokens', async () => {
    const fresh = uniqueMysqlTable('prune');
    const p = new MysqlLockProvider({ connection: MYSQL_URL, tableName: fresh });
    try {
      const old = await p.acquire({ key: 'lock:old', owner: 'a', ttl: 60_000, wait: false });
      await p.release('lock:old', 'a');
      await p.acquire({ key: 'lock:held', owner: 'h', ttl: 60_000, wait: false });
      await p.acquire({ key: 'lock:recent', owner: 'r', ttl: 60_000, wait: false });
      await p.release('lock:recent', 'r');
      // Age two rows by two hours, as if unused since: the released one, and the held one (its lease still runs).
      await mysqlQuery(
        `UPDATE \`${fresh}\` SET expires_at = IF(name = 'lock:old', expires_at - INTERVAL 2 HOUR, expires_at), fencing_token = fencing_token - 7200000000 WHERE name IN ('lock:old', 'lock:held')`,
      );
      expect(await p.prune(3_600_000)).toBe(1);
      const names = await mysqlQuery<Array<{ n: string }>>(
        `SELECT CAST(name AS CHAR) AS n FROM \`${fresh}\` ORDER BY name`,
      );
      expect(names.map((r) => r.n)).toEqual(['lock:held', 'lock:recent']);
      const again = await p.acquire({ key: 'lock:old', owner: 'b', ttl: 1_000, wait: false });
      expect(again!.fencingToken).toBeGreaterThan(old!.fencingToken);
      await expect(p.prune(1_000)).rejects.toThrow(LockOptionsError);
    } finally {
      await p.close();
      await dropMysqlLockTables(fresh);
    }
  }, 20_000);

  test('createTable: false on missing tables fails naming schemaSql; schemaSql() in a migration creates them', async () => {
    const fresh = uniqueMysqlTable('mig');
    const p = new MysqlLockProvider({ connection: MYSQL_URL, tableName: fresh, createTable: false });
    try {
      const err = await storeErrorWithin(p.ping(), 5_000);
      expect(err.message).toContain(`MysqlLockProvider.schemaSql("${fresh}")`);
      const conn = await mysqlPromise.createConnection({ uri: MYSQL_URL, multipleStatements: true });
      await conn.query(MysqlLockProvider.schemaSql(fresh));
      await conn.query(MysqlLockProvider.schemaSql(fresh)); // idempotent
      await conn.end();
      expect(await p.acquire({ key: 'lock:m', owner: 'a', ttl: 1_000, wait: false })).not.toBeNull();
    } finally {
      await p.close();
      await dropMysqlLockTables(fresh);
    }
  }, 20_000);

  test('a wait whose signal aborts while it is still queueing (before it first sleeps) resolves null, and leaves no waiter in the way', async () => {
    const p = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table });
    const key = `lock:abort-early-${process.pid}`;
    try {
      expect(await p.acquire({ key, owner: 'holder', ttl: 30_000, wait: false })).not.toBeNull();
      const ac = new AbortController();
      const waiting = p.acquire({ key, owner: 'waiter', ttl: 30_000, wait: true, signal: ac.signal });
      ac.abort(); // its first statements are in flight: the abort event comes before the waiter listens for it
      const outcome = await Promise.race([
        waiting,
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5_000)),
      ]);
      expect(outcome).toBeNull();
      expect(await p.release(key, 'holder')).toBe(true);
      expect(await p.acquire({ key, owner: 'try', ttl: 1_000, wait: false })).not.toBeNull();
      await p.release(key, 'try');
    } finally {
      await p.close();
    }
  }, 20_000);

  test('extendMany of locks all still held (names out of byte order, non-ASCII) sets every lease and answers all true', async () => {
    const p = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table });
    const keys = ['lock:many-z', 'lock:many-ä', 'lock:many-a'];
    try {
      for (const key of keys)
        expect(await p.acquire({ key, owner: `o-${key}`, ttl: 1_000, wait: false })).not.toBeNull();
      expect(await p.extendMany(keys.map((key) => ({ key, owner: `o-${key}`, ttl: 60_000 })))).toEqual([
        true,
        true,
        true,
      ]);
      for (const key of keys) expect((await p.holder(key))?.remainingMs).toBeGreaterThan(30_000);
    } finally {
      await p.close();
    }
  }, 20_000);

  test('close() leaves an app pool (mysql2 or mysql2/promise) open; a waiter queued at close resolves null', async () => {
    const pool = mysqlPromise.createPool({ uri: MYSQL_URL, connectionLimit: 2 });
    const p = new MysqlLockProvider({ connection: pool, tableName: table });
    const holder = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table });
    expect(await holder.acquire({ key: 'lock:app-pool', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const waiting = p.acquire({ key: 'lock:app-pool', owner: 'w', ttl: 1_000, wait: true });
    await sleep(300);
    await p.close();
    expect(await waiting).toBeNull();
    expect(await pool.query('SELECT 1 AS one')).toEqual([[{ one: 1 }], expect.anything()]);
    await pool.end();
    await storeErrorWithin(p.acquire({ key: 'lock:app-pool', owner: 'late', ttl: 1_000, wait: false }), 1_000);
    // Its queue entry is gone: a newcomer is not held back by it once the holder releases.
    expect(await holder.release('lock:app-pool', 'h')).toBe(true);
    expect(await holder.acquire({ key: 'lock:app-pool', owner: 'next', ttl: 1_000, wait: false })).not.toBeNull();
    await holder.close();
  }, 20_000);
});

describe('MySQL options that can never work fail before any connection, with what to pass', () => {
  test.each([
    [
      { mysql: 'postgres://root@127.0.0.1/test' },
      /the mysql URL has the scheme "postgres:" \(host 127\.0\.0\.1\); use mysql:\/\//,
    ],
    [
      { mysql: 'mysql://root@127.0.0.1:99999/test' },
      /the mysql URL's port "99999" \(host 127\.0\.0\.1\) is not a port number/,
    ],
    [{ mysql: { host: '127.0.0.1', port: 0 } }, /mysql\.port must be a port number from 1 to 65535/],
    [{ mysql: 42 }, /mysql must be a mysql:\/\/ URL, mysql2 pool options \(an object\) or a mysql2 Pool/],
    [{ mysql: { getConnection: () => undefined, query: () => undefined } }, /a pool without execute\(\).*use mysql2/],
    [
      { mysql: { connection: MYSQL_URL, tableName: 'bad-name' } },
      /tableName must be an identifier or database\.identifier/,
    ],
    [
      { mysql: MYSQL_URL, postgres: 'postgres://127.0.0.1/test' },
      /give only one of provider, redis, postgres, mysql; got postgres and mysql/,
    ],
  ])('%j', async (options, message) => {
    const err = await Promise.resolve(createLockProvider(options as never)).then(
      () => new Error('built'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LockOptionsError);
    expect((err as Error).message).toMatch(message);
  });

  test('new MysqlLockProvider() checks its options too', () => {
    expect(() => new MysqlLockProvider(undefined as never)).toThrow(/MysqlLockProvider: options must be an object/);
    expect(() => new MysqlLockProvider({ connection: MYSQL_URL, commandTimeout: -1 })).toThrow(LockOptionsError);
    expect(() => new MysqlLockProvider({ connection: MYSQL_URL, createTable: 'yes' as never })).toThrow(
      /createTable must be true or false/,
    );
    expect(() => new MysqlLockProvider({ connection: MYSQL_URL, tableName: `t${'x'.repeat(60)}` })).toThrow(
      /the table part at most 56/,
    );
  });
});
