/**
 * A standalone script (a cron job outside an HTTP server) that runs one piece
 * of work under a lock, then exits: no HTTP server, no scheduler.
 *
 *   node dist/sample/standalone/rebuild-report.js
 *
 * With REDIS_URL or DATABASE_URL set, every copy of this script on every
 * machine excludes the others; without either the lock is in memory.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockService } from 'nest-lock';
import { lockStoreOptions } from '../lock-store.js';

@Module({ imports: [LockModule.forRoot(lockStoreOptions())] })
class ScriptModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ScriptModule, { logger: ['error', 'warn'] });
  try {
    const locks = app.get(LockService);
    const result = await locks.withLock(
      'reports:rebuild',
      async (lock) => {
        // ... the real work; pass lock.signal to what can be cancelled, lock.fencingToken to storage ...
        return `rebuilt under fencing token ${lock.fencingToken}`;
      },
      { onHeld: 'skip' },
    );
    console.log(result ?? 'another copy is rebuilding the report; skipped');
  } finally {
    await app.close(); // releases any lock still held and closes the connection the module opened
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
