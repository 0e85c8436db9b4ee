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
