/**
 * Boots a Nest application context with LockModule and a recording logger,
 * and checks that a store that cannot work is named: one boot warning and
 * the same cause in the LockStoreError of a lock call.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockService, LockStoreError, type LockModuleOptions } from '../../lib/index.js';
import { RecordingLogger } from './recording-logger.js';

/** The start of the boot check's warning. */
export const BOOT_CHECK = 'The lock store does not work';

export async function bootLockApp(
  options: LockModuleOptions,
  providers: Array<new (...args: never[]) => unknown> = [],
  imports: unknown[] = [],
) {
  @Module({ imports: [LockModule.forRoot(options), ...(imports as [])], providers })
  class AppModule {}
  const logger = new RecordingLogger();
  const app = await NestFactory.createApplicationContext(AppModule, { logger, abortOnError: false });
  return { app, logger, locks: app.get(LockService) };
}

/** Boots with `options`, checks the one boot warning and the error of a lock call against `cause`; returns both. */
export async function expectNamedCause(
  options: LockModuleOptions,
  cause: RegExp,
): Promise<{ warning: string; error: LockStoreError }> {
  const { app, logger, locks } = await bootLockApp(options);
  try {
    const warnings = logger.lines('warn', BOOT_CHECK);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(cause);
    const error = await locks
      .withLock('job:1', () => 'ran')
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).message).toMatch(cause);
    expect((error as LockStoreError).message).toContain('"job:1"');
    expect((error as LockStoreError).cause).toHaveProperty('message'); // the client's own error
    return { warning: warnings[0], error: error as LockStoreError };
  } finally {
    await app.close();
  }
}
