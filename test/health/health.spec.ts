import 'reflect-metadata';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InMemoryLockProvider, LockModule, LockProvider, LockStoreError } from '../../lib/index.js';
import { LockHealthIndicator } from '../../lib/health/index.js';

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
      imports: [LockModule.forRoot({ redis: redis.url, commandTimeout: 500 }), TerminusModule.forRoot({ logger: false })],
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
