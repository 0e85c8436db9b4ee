/**
 * A Redis that cannot work is named at boot with its real cause (one warning,
 * host and port, never the password), `verifyOnBoot: 'fail'` stops the boot,
 * and every LockStoreError carries the cause the client saw. Each case is
 * real: a closed port, an unknown host, a Redis of the test's own with
 * `requirepass`, a database index the server rejects.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { LockStoreError, Locked } from '../../../lib/index.js';
import { bootLockApp as boot, expectNamedCause as named } from '../../support/boot-lock-app.js';
import { RedisServer } from '../../support/redis-server.js';
import { freePort } from '../../support/free-port.js';
import { sleep } from '../../support/sleep.js';

describe('a Redis that cannot work is named at boot and in every LockStoreError', () => {
  test('a closed port: ECONNREFUSED with host:port, never the password', async () => {
    const port = await freePort();
    const { warning, error } = await expectNamedCause(
      `redis://:s3cret-pw@127.0.0.1:${port}`,
      new RegExp(`Redis at 127\\.0\\.0\\.1:${port} refused the connection \\(ECONNREFUSED\\)`),
    );
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    for (const text of [warning, error.message]) expect(text).not.toContain('s3cret-pw');
  });

  test('an unknown host: ENOTFOUND, naming the host', async () => {
    const { error } = await expectNamedCause(
      'redis://nest-lock-no-such-host.invalid:6379',
      /the host name of Redis at nest-lock-no-such-host\.invalid:6379 was not found \((ENOTFOUND|EAI_AGAIN)\)/,
      2_000,
    );
    expect((error.cause as NodeJS.ErrnoException).code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  const expectNamedCause = (redis: string, cause: RegExp, commandTimeout = 500) =>
    named({ redis, commandTimeout }, cause);

  describe('a Redis with requirepass', () => {
    let server: RedisServer;
    beforeAll(async () => {
      server = await RedisServer.start(['--requirepass', 'right-password']);
    });
    afterAll(() => server?.stop());

    test('a wrong password: WRONGPASS, and the password given appears nowhere', async () => {
      const { warning, error } = await expectNamedCause(
        `redis://:wrong-password@127.0.0.1:${server.port}`,
        new RegExp(`Redis at 127\\.0\\.0\\.1:${server.port} rejected the user name or password \\(WRONGPASS\\)`),
      );
      for (const text of [warning, error.message]) expect(text).not.toContain('wrong-password');
    });

    test('no password: NOAUTH', async () => {
      await expectNamedCause(server.url, /requires a password and none was given \(NOAUTH\)/);
    });

    test('the right password: no warning, locks work', async () => {
      const { app, logger, locks } = await boot({ redis: `redis://:right-password@127.0.0.1:${server.port}` });
      try {
        expect(await locks.withLock('job:ok', () => 'ran')).toBe('ran');
        expect(logger.lines('warn')).toEqual([]);
      } finally {
        await app.close();
      }
    });
  });

  test('rediss:// to a Redis without TLS: the TLS connection is named, not just a timeout', async () => {
    await expectNamedCause(
      'rediss://127.0.0.1:6379',
      /Redis at 127\.0\.0\.1:6379 did not complete the TLS connection in time \(ETIMEDOUT\)/,
      1_000,
    );
  });

  test('a database index the server rejects: named at boot, and calls fail instead of using another database', async () => {
    await expectNamedCause(
      'redis://127.0.0.1:6379/4000',
      /Redis at 127\.0\.0\.1:6379 rejected the database index \(ERR DB index is out of range\)/,
    );
  });

  test("verifyOnBoot: 'fail' stops the boot with the cause; false boots without a check", async () => {
    const port = await freePort();
    const failed = await boot({ redis: `redis://127.0.0.1:${port}`, commandTimeout: 300, verifyOnBoot: 'fail' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(LockStoreError);
    expect((failed as Error).message).toMatch(
      new RegExp(`refused the connection \\(ECONNREFUSED\\).*verifyOnBoot: 'fail'`),
    );

    const { app, logger } = await boot({
      redis: `redis://127.0.0.1:${port}`,
      commandTimeout: 300,
      verifyOnBoot: false,
    });
    expect(logger.lines('warn')).toEqual([]);
    await app.close();
  });

  test('while Redis is down, a failing scheduled task is logged once per interval, not once per tick', async () => {
    let ticks = 0;
    @Injectable()
    class Jobs {
      @Interval(25)
      @Locked('every-25-ms')
      tick() {
        ticks++;
      }
    }
    const port = await freePort();
    const { app, logger } = await boot(
      { redis: `redis://127.0.0.1:${port}`, commandTimeout: 100 },
      [Jobs],
      [ScheduleModule.forRoot()],
    );
    try {
      const skipped = () => logger.lines('error', 'skipped this tick');
      const deadline = Date.now() + 10_000;
      // Let at least 20 ticks fail.
      const calls = () => logger.entries.length;
      await sleep(1_500);
      while (skipped().length === 0 && Date.now() < deadline) await sleep(50);
      expect(calls()).toBeGreaterThan(0);
      expect(ticks).toBe(0);
      expect(skipped()).toHaveLength(1);
      expect(skipped()[0]).toMatch(/"every-25-ms".*refused the connection \(ECONNREFUSED\)/);
      expect(logger.entries.filter(([level]) => level === 'error' || level === 'warn')).toHaveLength(2); // the boot check, then this
    } finally {
      await app.close();
    }
    // On close, the repeats are summed up in one line.
    expect(logger.lines('warn', 'more time')).toHaveLength(1);
    expect(logger.lines('warn', 'more time')[0]).toMatch(/failed \d+ more times in the last 60 s with the same cause/);
  });
});
