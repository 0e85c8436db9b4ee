/**
 * A scheduled tick while the lock store is down: skipped and logged at error
 * level once per tick by default; run anyway with failOpen: true.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { Cron, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { LockModule, Locked } from '../../../lib/index.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { RedisServer } from '../../support/redis-server.js';

@Injectable()
class Jobs {
  runs: string[] = [];

  @Cron('0 0 1 1 *', { name: 'closed' })
  @Locked('fail-closed')
  closed() {
    this.runs.push('closed');
  }

  @Cron('0 0 1 1 *', { name: 'open' })
  @Locked('fail-open', { failOpen: true })
  open() {
    this.runs.push('open');
  }
}

describe('scheduled tasks when Redis is down', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(() => redis.stop());

  test('default: the tick is skipped and logged at error once; failOpen: true runs it; both recover when Redis is back', async () => {
    @Module({
      imports: [LockModule.forRoot({ redis: redis.url, commandTimeout: 500 }), ScheduleModule.forRoot()],
      providers: [Jobs],
    })
    class AppModule {}
    const logger = new RecordingLogger();
    const app = await NestFactory.createApplicationContext(AppModule, { logger });
    try {
      const jobs = app.get(Jobs);
      const registry = app.get(SchedulerRegistry);
      // The scheduler calls these methods as they are on the instance; calling them is a tick.
      expect(registry.getCronJobs().has('closed') && registry.getCronJobs().has('open')).toBe(true);
      await jobs.closed();
      await jobs.open();
      expect(jobs.runs.sort()).toEqual(['closed', 'open']);

      await redis.kill();
      jobs.runs = [];
      logger.entries = [];
      const started = Date.now();
      await jobs.closed();
      await jobs.open();
      expect(Date.now() - started).toBeLessThan(10_000); // bounded by commandTimeout, never hangs
      expect(jobs.runs).toEqual(['open']);
      const errors = logger.entries.filter(([level]) => level === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0][1]).toContain('"fail-closed"');
      expect(errors[0][1]).toContain('skipped this tick');
      expect(errors[0][1]).not.toMatch(/redis:\/\//);
      expect(
        logger.entries.some(([level, m]) => level === 'warn' && m.includes('"fail-open"') && m.includes('failOpen')),
      ).toBe(true);

      await redis.launch();
      jobs.runs = [];
      const deadline = Date.now() + 15_000;
      while (jobs.runs.length === 0 && Date.now() < deadline) {
        await jobs.closed();
        if (jobs.runs.length === 0) await new Promise((r) => setTimeout(r, 200));
      }
      expect(jobs.runs).toEqual(['closed']);
    } finally {
      await app.close();
    }
  });
});
