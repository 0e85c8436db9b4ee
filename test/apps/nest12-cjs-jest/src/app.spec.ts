import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { InMemoryLockProvider, LockProvider } from 'nest-lock';
import request from 'supertest';
import { AppModule } from './app.module';
import { DigestTask } from './digest.task';

describe('AppModule with the in-memory lock store', () => {
  let app: INestApplication;
  const memory = new InMemoryLockProvider();

  async function start(): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(LockProvider)
      .useValue(memory)
      .compile();
    app = moduleRef.createNestApplication();
    return app.init();
  }

  afterEach(async () => {
    await app.close();
    await memory.reset();
  });

  it('answers 409 while another instance holds the report lock, 201 once it is free', async () => {
    await start();
    const release = await memory.hold('report');
    const held = await request(app.getHttpServer()).post('/report').expect(409);
    expect(held.body.lock).toBe('report');
    await release();
    await request(app.getHttpServer()).post('/report').expect(201, { done: true });
  });

  it('skips the digest while another instance holds its lock, and sends it after', async () => {
    // Held before the scheduler starts, so no tick can run in between.
    const release = await memory.hold('digest');
    const task = (await start()).get(DigestTask);
    await task.send();
    expect(task.runs).toBe(0);
    await release();
    await task.send();
    expect(task.runs).toBeGreaterThan(0);
  });

  it('reports the lock store as up', async () => {
    await start();
    const health = await request(app.getHttpServer()).get('/health').expect(200);
    expect(health.body.info.locks.status).toBe('up');
  });
});
