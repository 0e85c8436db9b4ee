/** The engine's lease behaviour (renewal, lost-lock signal, holdAtLeast) over PostgresLockProvider. */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pg from 'pg';
import { LockLostError, LockManager, LockModule, LockProvider, LockService } from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueTable('eng');

describe('LockManager over PostgreSQL', () => {
  const provider = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table });
  const locks = new LockManager({ provider });
  afterAll(async () => {
    await locks.close();
    await provider.close();
    await dropLockTables(table);
  });

  test('renewal keeps a lock past its ttl; another owner taking the row aborts the signal with LockLostError', async () => {
    const lock = await locks.acquire('stolen', { ttl: 1_200 });
    await sleep(1_600);
    expect(lock.held).toBe(true);
    await sql(`UPDATE "${table}" SET owner = 'thief' WHERE name = 'lock:stolen'`);
    await sleep(1_000); // the next renewal (every ttl/3) finds another owner
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(await lock.release()).toBe(false);
  });

  test('holdAtLeast keeps the row held after a fast task, then frees it', async () => {
    await locks.withLock('at-least', () => undefined, { holdAtLeast: 800 });
    expect(await locks.tryAcquire('at-least')).toBeNull();
    await sleep(1_100);
    const again = await locks.tryAcquire('at-least');
    expect(again).not.toBeNull();
    await again!.release();
  });

  test('LockModule.forRoot({ postgres: pool }) uses the app pool and leaves it open on shutdown', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    @Module({ imports: [LockModule.forRoot({ postgres: pool })] })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    expect(app.get(LockProvider)).toBeInstanceOf(PostgresLockProvider);
    expect(await app.get(LockService).withLock(`app-pool:${process.pid}`, () => 'ran')).toBe('ran');
    await app.close();
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await pool.end();
  });
});
