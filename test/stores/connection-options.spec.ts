/**
 * Connection options that can never work fail at forRoot (and at boot for
 * forRootAsync) with LockOptionsError, before any connection: a scheme that
 * is not redis:/rediss: (postgres:/postgresql:), a port out of range, a
 * database index that is not an integer. Messages never show the password.
 */
import 'reflect-metadata';
import { inspect } from 'node:util';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, LockOptionsError } from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';

const bad: Array<[label: string, options: Parameters<typeof LockModule.forRoot>[0], message: RegExp]> = [
  [
    'an http URL for Redis',
    { redis: 'http://:pw-1@cache:6379' },
    /redis URL has the scheme "http:" \(host cache\); use redis:\/\/ \(or rediss:\/\/ for TLS\)/,
  ],
  [
    'a Redis port out of range',
    { redis: 'redis://cache:70000' },
    /port "70000" \(host cache\) is not a port number from 1 to 65535/,
  ],
  [
    'a Redis database that is not an integer',
    { redis: 'redis://cache:6379/first' },
    /database "\/first" \(host cache\) is not an integer/,
  ],
  [
    'a Redis options port out of range',
    { redis: { host: 'cache', port: 0 } },
    /redis\.port must be a port number from 1 to 65535, got 0/,
  ],
  [
    'a Redis options db that is not an integer',
    { redis: { host: 'cache', db: 1.5 } },
    /redis\.db must be an integer >= 0 \(the Redis database index\), got 1\.5/,
  ],
  [
    'a mysql URL for PostgreSQL',
    { postgres: 'mysql://app:pw-1@db:3306/app' },
    /postgres URL has the scheme "mysql:" \(host db\); use postgres:\/\/ or postgresql:\/\//,
  ],
  [
    'a PostgreSQL port out of range',
    { postgres: { connection: 'postgres://app@db:99999/app' } },
    /port "99999" \(host db\) is not a port number/,
  ],
  [
    'a PostgreSQL PoolConfig port out of range',
    { postgres: { host: 'db', port: -1 } },
    /postgres\.port must be a port number from 1 to 65535, got -1/,
  ],
  [
    'an unknown verifyOnBoot',
    { verifyOnBoot: 'yes' as never },
    /verifyOnBoot must be 'warn', 'fail' or false, got "yes"/,
  ],
];

describe('connection options that can never work', () => {
  test.each(bad)('%s fails at forRoot with LockOptionsError naming the option', (_label, options, message) => {
    let error: unknown;
    try {
      LockModule.forRoot(options);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LockOptionsError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('pw-1');
  });

  test('the providers check the same when built directly', () => {
    expect(() => new RedisLockProvider({ redis: 'https://cache:6379' })).toThrow(/scheme "https:"/);
    expect(() => new PostgresLockProvider({ connection: 'postgres://db:0/app' })).toThrow(/port "0"/);
  });

  test('forRootAsync: the same check fails the boot with LockOptionsError', async () => {
    @Module({ imports: [LockModule.forRootAsync({ useFactory: () => ({ redis: 'http://cache:6379' }) })] })
    class AppModule {}
    const failed = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(LockOptionsError);
    expect((failed as Error).message).toMatch(/scheme "http:"/);
  });

  test('valid forms pass: rediss, a socket path, a bare port, postgresql:, key=value settings', () => {
    for (const redis of [
      'rediss://:pw@cache:6380/2',
      '/tmp/redis.sock',
      '6379',
      { host: 'cache', port: 6379, db: 3 },
    ]) {
      expect(() => LockModule.forRoot({ redis })).not.toThrow();
    }
    for (const postgres of [
      'postgresql://app@db/app',
      'host=/var/run/postgresql dbname=app',
      { port: '5432' as unknown as number },
    ]) {
      expect(() => LockModule.forRoot({ postgres })).not.toThrow();
    }
  });

  test('an option error prints no stray fields (no lockName: undefined)', () => {
    let error: unknown;
    try {
      LockModule.forRoot({ ttl: -1 });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LockOptionsError);
    expect(inspect(error)).not.toMatch(/lockName/);
    expect(Object.keys(error as object)).not.toContain('lockName');
  });
});
