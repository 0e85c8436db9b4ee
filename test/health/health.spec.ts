import 'reflect-metadata';
import { Controller, Get, Logger, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InMemoryLockProvider, LockModule, LockProvider, LockStoreError } from '../../lib/index.js';
import { LockHealthIndicator } from '../../lib/health/index.js';
import { RecordingLogger } from '../support/recording-logger.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: LockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks')]);
  }
}

class DownProvider extends InMemoryLockProvider {
  override async ping(): Promise<number> {
    throw new LockStoreError('ping', 'connect ECONNREFUSED 127.0.0.1:1');
  }
}

async function appWith(provider: LockProvider): Promise<INestApplication> {
  const ref = await Test.createTestingModule({
    imports: [LockModule.forRoot({ provider }), TerminusModule.forRoot({ logger: false })],
    controllers: [HealthController],
    providers: [LockHealthIndicator],
  }).compile();
  const app = ref.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('LockHealthIndicator', () => {
  test('up with the store kind and round-trip time when the store answers', async () => {
    const app = await appWith(new InMemoryLockProvider());
    try {
      const res = await request(app.getHttpServer()).get('/health').expect(200);
      expect(res.body.status).toBe('ok');
      expect(res.body.info.locks).toMatchObject({ status: 'up', store: 'memory' });
      expect(typeof res.body.info.locks.roundTripMs).toBe('number');
    } finally {
      await app.close();
    }
  });

  test('down (503) with the reason when the store does not answer', async () => {
    const app = await appWith(new DownProvider());
    try {
      const res = await request(app.getHttpServer()).get('/health').expect(503);
      expect(res.body.status).toBe('error');
      expect(res.body.error.locks).toMatchObject({ status: 'down', store: 'memory' });
      expect(res.body.error.locks.message).toContain('ECONNREFUSED');
    } finally {
      await app.close();
    }
  });
});

describe('LockHealthIndicator on Redis', () => {
  test('up while Redis runs, down (503) within the command timeout when it is stopped, up again after a restart', async () => {
    const { RedisServer } = await import('../support/redis-server.js');
    const redis = await RedisServer.start();
    const ref = await Test.createTestingModule({
      imports: [
        LockModule.forRoot({ redis: redis.url, commandTimeout: 500 }),
        TerminusModule.forRoot({ logger: false }),
      ],
      controllers: [HealthController],
      providers: [LockHealthIndicator],
    }).compile();
    const app = ref.createNestApplication({ logger: false });
    await app.init();
    try {
      const up = await request(app.getHttpServer()).get('/health').expect(200);
      expect(up.body.info.locks).toMatchObject({ status: 'up', store: 'redis' });
      expect(up.body.info.locks.roundTripMs).toBeGreaterThanOrEqual(0);

      await redis.kill();
      const started = Date.now();
      const down = await request(app.getHttpServer()).get('/health').expect(503);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(down.body.error.locks).toMatchObject({ status: 'down', store: 'redis' });
      expect(JSON.stringify(down.body)).not.toContain('redis://');

      await redis.launch();
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await request(app.getHttpServer()).get('/health')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(status).toBe(200);
    } finally {
      await app.close();
      await redis.stop();
    }
  });
});

describe('LockHealthIndicator and the boot on a Redis that may evict lock keys (evictionCheck)', () => {
  const servers: Array<{ stop(): Promise<void> }> = [];
  afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.stop()))));
  async function evicting(policy: string): Promise<string> {
    const { RedisServer } = await import('../support/redis-server.js');
    const redis = await RedisServer.start(['--maxmemory', '3mb', '--maxmemory-policy', policy]);
    servers.push(redis);
    return redis.url;
  }
  async function boot(
    options: Parameters<typeof LockModule.forRoot>[0],
    logger: RecordingLogger,
  ): Promise<INestApplication> {
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot(options), TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController],
      providers: [LockHealthIndicator],
    })
      .setLogger(logger)
      .compile();
    const app = ref.createNestApplication({ logger });
    await app.init();
    return app;
  }

  test("'warn' (default): the module logs the warning through Nest's Logger, and the indicator is up with it", async () => {
    const url = await evicting('allkeys-lru');
    const logger = new RecordingLogger();
    Logger.overrideLogger(logger);
    const app = await boot({ redis: url }, logger);
    try {
      const res = await request(app.getHttpServer()).get('/health').expect(200);
      expect(res.body.info.locks).toMatchObject({ status: 'up', store: 'redis' });
      expect(res.body.info.locks.warnings).toEqual([expect.stringContaining('maxmemory-policy allkeys-lru')]);
      expect(logger.lines('warn', 'maxmemory-policy allkeys-lru')).toHaveLength(1);
    } finally {
      await app.close();
      Logger.overrideLogger(false);
    }
  });

  test("'fail': the boot stops with LockStoreError that says what to set (also with verifyOnBoot 'warn', and with a provider of your own); the indicator is down", async () => {
    const url = await evicting('volatile-lru');
    const logger = new RecordingLogger();
    const { RedisLockProvider } = await import('../../lib/stores/redis/index.js');
    const own = [
      new RedisLockProvider({ redis: url, evictionCheck: 'fail' }),
      new RedisLockProvider({ redis: url, evictionCheck: 'fail' }),
    ];
    try {
      for (const options of [{ redis: url, evictionCheck: 'fail' as const }, { provider: own[0] }]) {
        const err = await boot(options, logger).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LockStoreError);
        expect((err as Error).message).toContain('maxmemory-policy volatile-lru');
        expect((err as Error).message).toContain('Set maxmemory-policy noeviction');
      }
      // Booted without the check (verifyOnBoot: false): the indicator is down with the reason.
      const app = await boot({ provider: own[1], verifyOnBoot: false }, logger);
      try {
        const res = await request(app.getHttpServer()).get('/health').expect(503);
        expect(res.body.error.locks).toMatchObject({ status: 'down', store: 'redis' });
        expect(res.body.error.locks.message).toContain('maxmemory-policy volatile-lru');
      } finally {
        await app.close();
      }
    } finally {
      await Promise.all(own.map((p) => p.close()));
    }
  });
});
