/**
 * Durations and the key prefix in the module's and the stores' own options
 * follow the one rule of names and durations (docs/configuration.md): a value over
 * MAX_DURATION_MS (the longest Node timer), or a key prefix over
 * MAX_KEY_PREFIX_LENGTH or with a control character, fails at forRoot / at
 * the constructor with LockOptionsError naming the option, the value and the
 * range; the largest value is accepted.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockOptionsError, MAX_DURATION_MS, MAX_KEY_PREFIX_LENGTH } from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { redisSettings } from '../../lib/stores/redis/redis-clients.js';
import { POSTGRES_URL } from '../support/pg-test-env.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const range = 'and at most 2147483647 (2^31 − 1 ms, about 24.8 days)';

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('did not throw');
};

describe('durations and keyPrefix in module and store options', () => {
  test.each([
    ['ttl', { ttl: 2 ** 31 }, 'ttl must be a finite number of milliseconds > 0 ', '2147483648'],
    [
      'waitTimeout',
      { waitTimeout: 1e20 },
      'waitTimeout must be a finite number of milliseconds >= 0 ',
      '100000000000000000000',
    ],
    ['maxHold', { maxHold: Infinity }, 'maxHold must be a finite number of milliseconds > 0 ', 'Infinity'],
    [
      'commandTimeout',
      { redis: url, commandTimeout: 2 ** 31 },
      'commandTimeout must be a finite number of milliseconds > 0 ',
      '2147483648',
    ],
  ])(
    'forRoot: %s over MAX_DURATION_MS fails with LockOptionsError naming option, range and value',
    (_option, options, expected, value) => {
      const error = thrown(() => LockModule.forRoot(options));
      expect(error).toBeInstanceOf(LockOptionsError);
      expect(error.message).toBe(`LockModule options: ${expected}${range}, got ${value}.`);
    },
  );

  test('forRoot: a keyPrefix over MAX_KEY_PREFIX_LENGTH or with a control character fails; the longest one passes', () => {
    expect(thrown(() => LockModule.forRoot({ keyPrefix: 'é'.repeat(MAX_KEY_PREFIX_LENGTH + 1) })).message).toMatch(
      /LockModule options: a keyPrefix must be at most 128 characters \(UTF-16 code units.*\(129 characters\)/,
    );
    expect(thrown(() => LockModule.forRoot({ keyPrefix: 'app\n' })).message).toMatch(
      /the keyPrefix "app\\n" holds a control character U\+000A at index 3/,
    );
    expect(() =>
      LockModule.forRoot({
        keyPrefix: 'é'.repeat(MAX_KEY_PREFIX_LENGTH),
        ttl: MAX_DURATION_MS,
        waitTimeout: MAX_DURATION_MS,
      }),
    ).not.toThrow();
  });

  test('forRootAsync: a duration over MAX_DURATION_MS from config fails the boot with LockOptionsError', async () => {
    @Module({ imports: [LockModule.forRootAsync({ useFactory: () => ({ ttl: 1e20 }) })] })
    class AppModule {}
    const failed = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(LockOptionsError);
    expect((failed as Error).message).toMatch(/ttl must be .* at most 2147483647/);
  });

  test('the Redis and PostgreSQL providers refuse commandTimeout / waiterLease / prune.olderThanMs over MAX_DURATION_MS when built', () => {
    expect(() => new RedisLockProvider({ redis: url, commandTimeout: 2 ** 31 })).toThrow(
      `RedisLockProvider: commandTimeout must be a finite number of milliseconds > 0 ${range}`,
    );
    expect(() => new RedisLockProvider({ redis: url, waiterLease: 1e20 })).toThrow(
      `RedisLockProvider: waiterLease must be a finite number of milliseconds > 0 ${range}`,
    );
    expect(() => new PostgresLockProvider({ connection: POSTGRES_URL, prune: { olderThanMs: 1e20 } })).toThrow(
      `PostgresLockProvider: prune.olderThanMs must be a finite number of milliseconds >= 60000 ${range}, got 100000000000000000000.`,
    );
    expect(() => new PostgresLockProvider({ connection: POSTGRES_URL, commandTimeout: 2 ** 31 })).toThrow(
      `PostgresLockProvider: commandTimeout must be a finite number of milliseconds > 0 ${range}`,
    );
  });

  test('the largest commandTimeout is accepted, and the waiter lease derived from it stays within MAX_DURATION_MS', async () => {
    expect(redisSettings({ redis: url, commandTimeout: MAX_DURATION_MS }).waiterLease).toBe(MAX_DURATION_MS);
    const postgres = new PostgresLockProvider({
      connection: POSTGRES_URL,
      commandTimeout: MAX_DURATION_MS,
      createTable: false,
    });
    try {
      expect((postgres as unknown as { waiterLease: number }).waiterLease).toBe(MAX_DURATION_MS);
    } finally {
      await postgres.close();
    }
  });
});
