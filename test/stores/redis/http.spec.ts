/**
 * Two Nest app instances on one Redis: a lock held by one answers 500 on a
 * @Locked route of the other (409 with LockExceptionFilter). And the module
 * closes the connection it opened, not one it was given.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Controller, Module, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { LockExceptionFilter, LockModule, LockProvider, LockService, Locked } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { RedisServer } from '../../support/redis-server.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `http:${randomBytes(4).toString('hex')}:`;

@Controller()
class JobController {
  @Post('job')
  @Locked('job')
  run() {
    return { ran: true };
  }
}

async function app(options: { filter?: boolean; redis?: Redis | string } = {}): Promise<INestApplication> {
  @Module({
    imports: [LockModule.forRoot({ redis: options.redis ?? url, keyPrefix, commandTimeout: 1_000 })],
    controllers: [JobController],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const instance = moduleRef.createNestApplication({ logger: false });
  if (options.filter) instance.useGlobalFilters(new LockExceptionFilter());
  await instance.init();
  return instance;
}

describe('@Locked routes across app instances on one Redis', () => {
  let a: INestApplication;
  let b: INestApplication;
  let c: INestApplication;
  beforeAll(async () => {
    [a, b, c] = await Promise.all([app(), app(), app({ filter: true })]);
  });
  afterAll(async () => {
    await Promise.all([a, b, c].map((x) => x?.close()));
  });

  test('each instance has its own RedisLockProvider', () => {
    const providers = [a, b, c].map((x) => x.get(LockProvider));
    for (const p of providers) expect(p).toBeInstanceOf(RedisLockProvider);
    expect(new Set(providers).size).toBe(3);
  });

  test('held by instance A: 500 on instance B, 409 on instance C with the filter; free again after release', async () => {
    const held = await a.get(LockService).acquire('job');
    try {
      await request(b.getHttpServer()).post('/job').expect(500);
      const res = await request(c.getHttpServer()).post('/job').expect(409);
      expect(res.body).toMatchObject({ statusCode: 409, lock: 'job' });
    } finally {
      await held.release();
    }
    await request(b.getHttpServer()).post('/job').expect(201, { ran: true });
    await request(c.getHttpServer()).post('/job').expect(201, { ran: true });
  });
});

describe('connection ownership', () => {
  test('the module closes the connection it opened from a URL, and leaves a passed-in client open', async () => {
    const own = await app();
    const ownClient = (own.get(LockProvider) as RedisLockProvider).client as Redis;
    try {
      await own.get(LockProvider).ping();
      expect(ownClient.status).toBe('ready');
    } finally {
      await own.close();
    }
    expect(ownClient.status).toBe('end');

    const mine = new Redis(url);
    const given = await app({ redis: mine });
    try {
      await request(given.getHttpServer()).post('/job').expect(201);
      expect((given.get(LockProvider) as RedisLockProvider).client).toBe(mine);
    } finally {
      await given.close();
    }
    expect(mine.status).toBe('ready');
    expect(await mine.ping()).toBe('PONG');
    await mine.quit();
  });
});

test('application shutdown releases the locks the instance still holds', async () => {
  const x = await app();
  const held = await x.get(LockService).acquire('shutdown', { ttl: 60_000 });
  const redis = new Redis(url);
  try {
    expect(await redis.exists(`{${keyPrefix}shutdown}`)).toBe(1);
    await x.close();
    expect(held.held).toBe(false);
    expect(await redis.exists(`{${keyPrefix}shutdown}`)).toBe(0);
  } finally {
    await redis.quit();
  }
});

test('Redis down: 503 with LockExceptionFilter, within the command timeout; 201 again once it is back', async () => {
  const server = await RedisServer.start();
  const x = await app({ redis: server.url, filter: true });
  try {
    await request(x.getHttpServer()).post('/job').expect(201);
    await server.kill();
    const started = Date.now();
    const res = await request(x.getHttpServer()).post('/job').expect(503);
    expect(Date.now() - started).toBeLessThan(1_000 + 1_000);
    // The store's address is for the server's log, not for the caller.
    expect(res.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      lock: 'job',
      message: expect.stringContaining('lock store is unavailable'),
    });
    expect(JSON.stringify(res.body)).not.toContain(String(server.port));
    await server.launch();
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (status !== 201 && Date.now() < deadline) {
      status = (await request(x.getHttpServer()).post('/job')).status;
    }
    expect(status).toBe(201);
  } finally {
    await x.close();
    await server.stop();
  }
});
