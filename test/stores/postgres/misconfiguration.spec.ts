/**
 * A PostgreSQL that cannot work is named at boot with its real cause (one
 * warning, host and port, never the password), and every LockStoreError
 * carries it: a closed port, a server of the test's own with password auth,
 * a database that does not exist, a lock table the role may not create, a
 * lock table missing with createTable: false.
 */
import { LockStoreError } from '../../../lib/index.js';
import { bootLockApp, expectNamedCause } from '../../support/boot-lock-app.js';
import { PostgresServer } from '../../support/postgres-server.js';
import { POSTGRES_URL, dropLockTables, sql, uniqueTable } from '../../support/pg-test-env.js';
import { freePort } from '../../support/free-port.js';

/** The shared test server's URL with another user or database. */
function sharedWith({ user, database }: { user?: string; database?: string }): string {
  const url = new URL(POSTGRES_URL);
  if (user !== undefined) url.username = user;
  if (database !== undefined) url.pathname = `/${database}`;
  return url.toString();
}
const shared = new URL(POSTGRES_URL);
const sharedAt = `${shared.hostname}:${shared.port || 5432}`.replace(/\./g, '\\.');

describe('a PostgreSQL that cannot work is named at boot and in every LockStoreError', () => {
  test('a closed port: ECONNREFUSED with host:port, never the password', async () => {
    const port = await freePort();
    const { warning, error } = await expectNamedCause(
      { postgres: `postgres://app:s3cret-pw@127.0.0.1:${port}/app`, commandTimeout: 1_000 },
      new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${port} refused the connection \\(ECONNREFUSED\\)`),
    );
    for (const text of [warning, error.message]) expect(text).not.toContain('s3cret-pw');
  });

  test('a database that does not exist: 3D000, naming it', async () => {
    await expectNamedCause(
      { postgres: sharedWith({ database: 'nest_lock_no_such_db' }), commandTimeout: 2_000 },
      new RegExp(`PostgreSQL at ${sharedAt} has no database "nest_lock_no_such_db" \\(3D000\\)`),
    );
  });

  test('a lock table that this role may not create: 42501, with what to do', async () => {
    // PostgreSQL 15+: a role gets no CREATE on schema public unless granted.
    await sql(`DO $$ BEGIN CREATE ROLE nest_lock_no_create LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await sql('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    const tableName = uniqueTable('nocreate');
    await expectNamedCause(
      { postgres: { connection: sharedWith({ user: 'nest_lock_no_create' }), tableName }, commandTimeout: 2_000 },
      /denied a permission the lock store needs \(42501 .*\) \(the lock tables for "t_nocreate_\w+" do not exist and this role may not create them/,
    );
  });

  test('a lock table missing with createTable: false: named at boot, with the SQL to create it', async () => {
    const tableName = uniqueTable('missing');
    await dropLockTables(tableName);
    await expectNamedCause(
      { postgres: { connection: POSTGRES_URL, tableName, createTable: false }, commandTimeout: 2_000 },
      /\(42P01: relation "t_missing_\w+" does not exist\) \(create the lock tables with PostgresLockProvider\.schemaSql/,
    );
  });

  describe('a PostgreSQL with password auth', () => {
    let server: PostgresServer;
    beforeAll(async () => {
      server = await PostgresServer.create({ password: 'right-password' });
    }, 60_000);
    afterAll(() => server?.cleanup());

    test('a wrong password: 28P01, and the password given appears nowhere', async () => {
      const { warning, error } = await expectNamedCause(
        { postgres: `postgres://postgres:wrong-password@127.0.0.1:${server.port}/postgres`, commandTimeout: 2_000 },
        new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${server.port} rejected the credentials \\(28P01 `),
      );
      for (const text of [warning, error.message]) expect(text).not.toContain('wrong-password');
    });

    test('the right password: no warning, locks work', async () => {
      const tableName = uniqueTable('pwok');
      const { app, logger, locks } = await bootLockApp({ postgres: { connection: server.url, tableName } });
      try {
        expect(await locks.withLock('job:ok', () => 'ran')).toBe('ran');
        expect(logger.lines('warn')).toEqual([]);
      } finally {
        await app.close();
      }
    });
  });

  test("verifyOnBoot: 'fail' stops the boot with the cause", async () => {
    const port = await freePort();
    const failed = await bootLockApp({
      postgres: `postgres://postgres@127.0.0.1:${port}/test`,
      commandTimeout: 1_000,
      verifyOnBoot: 'fail',
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(LockStoreError);
    expect((failed as Error).message).toMatch(/refused the connection \(ECONNREFUSED\).*verifyOnBoot: 'fail'/);
  });
});
