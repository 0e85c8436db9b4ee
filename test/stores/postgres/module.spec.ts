/** LockModule.forRoot({ postgres }) wiring, and PostgresLockProvider's options. */
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import pg from 'pg';
import { NestFactory } from '@nestjs/core';
import {
  DEFAULT_COMMAND_TIMEOUT,
  LockModule,
  LockOptionsError,
  LockProvider,
  LockService,
  LockStoreError,
} from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';

async function boot(lockModule: DynamicModule) {
  @Module({ imports: [lockModule] })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false });
}

describe('LockModule with PostgreSQL', () => {
  const table = uniqueTable('mod');
  afterAll(async () => {
    await dropLockTables(table);
    await sql('DROP SCHEMA IF EXISTS nl_test_schema CASCADE');
  });

  test('forRoot({ postgres: url }) builds a PostgresLockProvider on the default table, and closes it on shutdown', async () => {
    const app = await boot(LockModule.forRoot({ postgres: POSTGRES_URL }));
    const provider = app.get(LockProvider);
    expect(provider).toBeInstanceOf(PostgresLockProvider);
    expect((provider as PostgresLockProvider).tableName).toBe('nest_locks');
    expect((provider as PostgresLockProvider).commandTimeout).toBe(DEFAULT_COMMAND_TIMEOUT);
    const locks = app.get(LockService);
    expect(await locks.withLock(`module-test:${process.pid}`, (lock) => lock.fencingToken)).toBeGreaterThan(0);
    await app.close();
    await expect(provider.ping()).rejects.toBeInstanceOf(LockStoreError);
  });

  test('forRootAsync({ useFactory }) takes full provider options and the module-level commandTimeout', async () => {
    const app = await boot(
      LockModule.forRootAsync({
        useFactory: () => ({
          postgres: { connection: { connectionString: POSTGRES_URL }, tableName: table },
          commandTimeout: 1_234,
        }),
      }),
    );
    const provider = app.get(LockProvider) as PostgresLockProvider;
    expect(provider.tableName).toBe(table);
    expect(provider.commandTimeout).toBe(1_234);
    const locks = app.get(LockService);
    const held = await locks.acquire('async-module');
    expect(await locks.tryAcquire('async-module')).toBeNull();
    await held.release();
    await app.close();
  });

  test('invalid options fail at once with LockOptionsError', async () => {
    for (const tableName of ['1abc', 'a-b', 'a.b.c', 'x"; DROP TABLE y; --', 'a'.repeat(50), '']) {
      expect(() => new PostgresLockProvider({ connection: POSTGRES_URL, tableName })).toThrow(LockOptionsError);
    }
    expect(() => new PostgresLockProvider({ connection: POSTGRES_URL, commandTimeout: 0 })).toThrow(LockOptionsError);
    const p = new PostgresLockProvider({ connection: POSTGRES_URL });
    await expect(p.acquire({ key: 'k'.repeat(2_001), owner: 'a', ttl: 1_000, wait: false })).rejects.toThrow(
      LockOptionsError,
    );
    await p.close();
    expect(() => new PostgresLockProvider({ connection: 42 as never })).toThrow(LockOptionsError);
    expect(() => new PostgresLockProvider({ connection: POSTGRES_URL, prepareStatements: 'yes' as never })).toThrow(
      LockOptionsError,
    );
    expect(() =>
      LockModule.forRoot({ postgres: POSTGRES_URL, provider: new PostgresLockProvider({ connection: POSTGRES_URL }) }),
    ).toThrow(LockOptionsError);
  });

  test('createTable: false leaves the schema to migrations: schemaSql() creates it', async () => {
    const own = `${table}_mig`;
    const p = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: own, createTable: false });
    try {
      await expect(p.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false })).rejects.toThrow(/does not exist/);
      await sql(PostgresLockProvider.schemaSql(own));
      expect(await p.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false })).toEqual({
        fencingToken: expect.any(Number),
        fences: 1,
      });
    } finally {
      await p.close();
      await dropLockTables(own);
    }
  });

  test('a lock table from before acquired_at: createTable: false names the migration to run; schemaSql() or createTable: true adds the column', async () => {
    const own = `${table}_old`;
    // The lock table as versions before the grant time created it.
    await sql(`CREATE TABLE "${own}" (name text PRIMARY KEY, owner text, fencing_token bigint NOT NULL, expires_at timestamptz NOT NULL);
      CREATE TABLE "${own}_waiters" (ticket bigserial PRIMARY KEY, name text NOT NULL, owner text NOT NULL, expires_at timestamptz NOT NULL);
      CREATE INDEX "${own}_waiters_name_idx" ON "${own}_waiters" (name, ticket);
      INSERT INTO "${own}" VALUES ('held', 'someone', 7, now() + interval '1 minute')`);
    const strict = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: own, createTable: false });
    const upgrading = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: own });
    try {
      const err = await strict.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockStoreError);
      expect((err as Error).message).toMatch(
        /created by an older version and lacks a column: run PostgresLockProvider\.schemaSql\(\) again/,
      );
      // createTable: true adds it, and keeps the rows it finds (the lock held before the upgrade stays held).
      expect(await upgrading.acquire({ key: 'k', owner: 'a', ttl: 30_000, wait: false })).not.toBeNull();
      expect(await upgrading.acquire({ key: 'held', owner: 'b', ttl: 1_000, wait: false })).toBeNull();
      const page = await strict.inspect({ prefix: '', limit: 10 });
      expect(page.locks.find((l) => l.key === 'held')?.heldSince).toBeUndefined();
      expect(Math.abs(Date.now() - page.locks.find((l) => l.key === 'k')!.heldSince!)).toBeLessThan(10_000);
    } finally {
      await Promise.all([strict.close(), upgrading.close()]);
      await dropLockTables(own);
    }
  });

  test('two providers on other tables can share one app pool (prepared statement names differ); prepareStatements: false works too', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    const one = new PostgresLockProvider({ connection: pool, tableName: `${table}_p1` });
    const two = new PostgresLockProvider({ connection: pool, tableName: `${table}_p2` });
    const plain = new PostgresLockProvider({ connection: pool, tableName: `${table}_p2`, prepareStatements: false });
    try {
      for (const p of [one, two, plain]) {
        const key = `shared:${p === plain ? 'plain' : p.tableName}`;
        expect(await p.acquire({ key, owner: 'a', ttl: 30_000, wait: false })).not.toBeNull();
        const waiting = p.acquire({ key, owner: 'b', ttl: 30_000, wait: true, waitTimeout: 5_000 });
        await new Promise((r) => setTimeout(r, 100));
        expect(await p.release(key, 'a')).toBe(true);
        expect(await waiting).not.toBeNull();
        expect(await p.extend(key, 'b', 1_000)).toBe(true);
      }
    } finally {
      await Promise.all([one, two, plain].map((p) => p.close()));
      await pool.end();
      await dropLockTables(`${table}_p1`);
      await dropLockTables(`${table}_p2`);
    }
  });

  test('a schema-qualified table works, waiting and NOTIFY included', async () => {
    await sql('CREATE SCHEMA IF NOT EXISTS nl_test_schema');
    const p = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: 'nl_test_schema.locks' });
    try {
      const first = await p.acquire({ key: 'k', owner: 'a', ttl: 30_000, wait: false });
      expect(first).not.toBeNull();
      const waiting = p.acquire({ key: 'k', owner: 'b', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      await new Promise((r) => setTimeout(r, 200));
      expect(await p.release('k', 'a')).toBe(true);
      expect(await waiting).toEqual(expect.objectContaining({ fencingToken: first!.fencingToken + 1, queued: true }));
      const [{ n }] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM nl_test_schema.locks');
      expect(n).toBe(1);
    } finally {
      await p.close();
    }
  });
});
