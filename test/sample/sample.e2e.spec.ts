import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { InMemoryLockProvider, LockProvider } from '../../lib/index.js';
import { AppModule } from '../../sample/app.module.js';

describe('the sample app, as the README describes it', () => {
  let app: INestApplication;
  const memory = new InMemoryLockProvider();

  beforeAll(async () => {
    const ref = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(LockProvider)
      .useValue(memory)
      .compile();
    app = ref.createNestApplication();
    await app.init();
  });
  afterAll(() => app.close());

  test('two payout runs at once: one pays, the other gets 500', async () => {
    const server = app.getHttpServer();
    const [a, b] = await Promise.all([request(server).post('/payouts/run'), request(server).post('/payouts/run')]);
    expect([a.status, b.status].sort()).toEqual([201, 500]);
    expect([a.body.status, b.body.status]).toContain('paid');
  });

  test('the same account twice: 409 from the filter; another account is not blocked', async () => {
    const server = app.getHttpServer();
    const [a, b, c] = await Promise.all([
      request(server).post('/accounts/42/recompute'),
      request(server).post('/accounts/42/recompute'),
      request(server).post('/accounts/7/recompute'),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect(c.status).toBe(201);
  });

  test("the locked service method with onHeld 'wait' serves both callers", async () => {
    const server = app.getHttpServer();
    const [a, b] = await Promise.all([request(server).post('/payouts/report'), request(server).post('/payouts/report')]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.fencingToken).not.toBe(b.body.fencingToken);
  });
});

describe('the sample digest task', () => {
  test('skips a tick quietly while "another instance" holds its lock, and runs once it is free', async () => {
    const { SchedulerRegistry } = await import('@nestjs/schedule');
    const { DigestTask } = await import('../../sample/digest/digest.task.js');
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(LockProvider)
      .useValue(memory)
      .compile();
    const app = ref.createNestApplication({ logger: false });
    await app.init();
    try {
      const task = app.get(DigestTask);
      const release = await memory.hold('digest');
      expect(await task.send()).toBeUndefined(); // skipped: no error thrown into the scheduler
      await release();
      await task.send();
      expect(memory.isHeld('digest')).toBe(true); // holdAtLeast keeps it for a few seconds
      const jobs = app.get(SchedulerRegistry).getCronJobs();
      expect(jobs.size).toBe(1); // the @Cron above @Locked is registered
    } finally {
      await app.close();
    }
  });
});
