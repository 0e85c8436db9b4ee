import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import murlock from 'murlock';
import type { MurLockModuleOptions } from 'murlock';
import { redisPeer, type Contender, type LockClient } from './contender.js';

const { MurLockModule, MurLockService } = murlock;

/**
 * `murlock` through its Nest module and `MurLockService.runWithLock` (the
 * documented programmatic form of `@MurLock`), in a Nest application context.
 */
function murlockContender(retry: 'default' | 'tuned'): Contender {
  const settings: Pick<MurLockModuleOptions, 'wait' | 'maxAttempts' | 'blocking'> =
    retry === 'default'
      ? // The README's configuration: wait 1000 ms (growing linearly per attempt), 3 attempts, then throws.
        { wait: 1000, maxAttempts: 3, blocking: false }
      : // Blocking mode: retries every `wait` ms without limit.
        { wait: 10, maxAttempts: 3, blocking: true };
  const waits =
    retry === 'default' ? 'README: 3 attempts, waits 1 s then 2 s, then throws' : 'blocking mode, retries every 10 ms';
  return redisPeer('murlock', 'murlock', retry, waits, async (env) => {
    class MurlockBenchModule {}
    Module({
      imports: [MurLockModule.forRoot({ redisOptions: { url: env.redisUrl }, logLevel: 'none', ...settings })],
    })(MurlockBenchModule);
    const app = await NestFactory.createApplicationContext(MurlockBenchModule, { logger: false });
    await app.init();
    const service = app.get(MurLockService);
    const client: LockClient = {
      withLock(name, fn) {
        return service.runWithLock(name, env.ttl, fn);
      },
      async close() {
        await app.close();
      },
    };
    return client;
  });
}

export const murlockDefault = murlockContender('default');
export const murlockTuned = murlockContender('tuned');
