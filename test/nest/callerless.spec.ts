/**
 * Handlers no caller waits on, and BullMQ's delayed pattern: an `@OnEvent`
 * listener (above or below `@Locked`) skips a held lock by default and logs
 * no error for it; a failed store skips the event with one log line per
 * cause; `jobDelay` moves a held job back to delayed and throws an error
 * BullMQ's worker takes as "not failed". (Real Nest apps of every context,
 * BullMQ included, run in test/package/contexts.spec.ts.)
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  InMemoryLockProvider,
  LockJobDelayedError,
  LockModule,
  LockOptionsError,
  LockStoreError,
  Locked,
  LockProvider,
} from '../../lib/index.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { sleep } from '../support/sleep.js';

@Injectable()
class Listener {
  runs = 0;

  @OnEvent('audit')
  @Locked('audit.above')
  async above() {
    await sleep(300);
    this.runs++;
  }

  @Locked('audit.below')
  @OnEvent('audit')
  async below() {
    await sleep(300);
    this.runs++;
  }
}

/** A job as BullMQ's worker passes it to process(job, token): only what jobDelay uses. */
class RecordedJob {
  delayedUntil: Array<[number, string | undefined]> = [];
  constructor(readonly data: { account: string }) {}
  async moveToDelayed(timestamp: number, token?: string) {
    this.delayedUntil.push([timestamp, token]);
  }
}

@Injectable()
class Processor {
  runs = 0;
  @Locked((job: RecordedJob) => `account:${job.data.account}`, { jobDelay: 2_000 })
  async process(_job: RecordedJob, _token?: string) {
    this.runs++;
  }
}

async function start(provider: LockProvider) {
  const logs = new RecordingLogger();
  const ref = await Test.createTestingModule({
    imports: [LockModule.forRoot({ provider, verifyOnBoot: false }), EventEmitterModule.forRoot()],
    providers: [Listener, Processor],
  }).compile();
  const app = ref.createNestApplication({ logger: logs });
  await app.init();
  return { app, logs };
}

class DownProvider extends InMemoryLockProvider {
  override acquire(): never {
    throw new LockStoreError('acquire', 'Redis at 10.1.2.3:6399 refused the connection (ECONNREFUSED)');
  }
}

test('@OnEvent: events that meet a held lock are skipped (above or below @Locked), with no error logged', async () => {
  const { app, logs } = await start(new InMemoryLockProvider());
  try {
    const events = app.get(EventEmitter2);
    await Promise.all([events.emitAsync('audit'), events.emitAsync('audit'), events.emitAsync('audit')]);
    expect(app.get(Listener).runs).toBe(2);
    expect(logs.lines('error')).toEqual([]);
  } finally {
    await app.close();
  }
});

test('@OnEvent with the store down: each event is skipped, logged once per cause as an event handler skip, without a stack', async () => {
  const { app, logs } = await start(new DownProvider());
  try {
    const events = app.get(EventEmitter2);
    await Promise.all([events.emitAsync('audit'), events.emitAsync('audit')]);
    expect(app.get(Listener).runs).toBe(0);
    expect(logs.lines('error')).toEqual([
      expect.stringMatching(
        /^Lock store failed for event handler "audit\.(above|below)"; skipped this event: .*ECONNREFUSED/,
      ),
    ]);
  } finally {
    await app.close();
  }
});

describe('jobDelay', () => {
  test('a held job is moved back to delayed with the worker token and throws a DelayedError; a free one runs', async () => {
    const memory = new InMemoryLockProvider();
    const { app } = await start(memory);
    try {
      const processor = app.get(Processor);
      const release = await memory.hold('account:a');
      const job = new RecordedJob({ account: 'a' });
      const before = Date.now();
      const error = await processor.process(job, 'worker-token').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockJobDelayedError);
      expect(error).toMatchObject({ name: 'DelayedError', lockName: 'account:a', delayMs: 2_000 });
      expect(job.delayedUntil).toHaveLength(1);
      expect(job.delayedUntil[0][1]).toBe('worker-token');
      expect(job.delayedUntil[0][0]).toBeGreaterThanOrEqual(before + 2_000);
      expect(processor.runs).toBe(0);
      await release();
      await processor.process(job, 'worker-token');
      expect(processor.runs).toBe(1);
    } finally {
      await app.close();
    }
  });

  test('outside a processor call (no job, no token) it fails with LockOptionsError before taking the lock', async () => {
    const { app } = await start(new InMemoryLockProvider());
    try {
      await expect(app.get(Processor).process(new RecordedJob({ account: 'a' }))).rejects.toThrow(
        /jobDelay needs a BullMQ processor method/,
      );
    } finally {
      await app.close();
    }
  });

  test('a bad jobDelay, or one with onHeld, fails at decoration', () => {
    const decorate = (options: object) => () =>
      Locked('x', options)(class {}.prototype, 'process', { value: () => undefined });
    expect(decorate({ jobDelay: -1 })).toThrow(LockOptionsError);
    expect(decorate({ jobDelay: -1 })).toThrow(/jobDelay must be a duration in ms/);
    expect(decorate({ jobDelay: 100, onHeld: 'wait' })).toThrow(/drop onHeld: 'wait', or drop jobDelay/);
  });
});
