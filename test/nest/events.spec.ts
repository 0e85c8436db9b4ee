import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { InMemoryLockProvider, LockModule, LockStoreError, Locked, type LockEvent } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

class FailingExtend extends InMemoryLockProvider {
  failAcquire = false;
  override async acquire(...args: Parameters<InMemoryLockProvider['acquire']>) {
    if (this.failAcquire) throw new LockStoreError('acquire', 'timed out after 500 ms');
    return super.acquire(...args);
  }
}

@Injectable()
class Work {
  @Locked('ev:fast')
  async fast() {
    await sleep(20);
  }

  @Locked('ev:skip', { onHeld: 'skip' })
  async skip() {}

  @Locked('ev:wait', { onHeld: 'wait', waitTimeout: 100 })
  async wait() {}

  @Locked('ev:long', { ttl: 150 })
  async long() {
    await sleep(400);
  }

  @Locked('ev:lost', { ttl: 150, renew: false })
  async lost() {
    await sleep(400);
  }
}

describe('onEvent sees every lock operation, with names and durations', () => {
  test('acquired, released, contended, skipped, timeout, extended, lost, store-error', async () => {
    const events: LockEvent[] = [];
    const memory = new FailingExtend();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory, onEvent: (e) => events.push(e) })],
      providers: [Work],
    }).compile();
    const work = ref.get(Work);

    await work.fast();
    const acquired = events.find((e) => e.type === 'acquired' && e.name === 'ev:fast');
    const released = events.find((e) => e.type === 'released' && e.name === 'ev:fast');
    expect(acquired).toMatchObject({ fencingToken: expect.any(Number), waitMs: expect.any(Number) });
    expect((released as Extract<LockEvent, { type: 'released' }>).heldMs).toBeGreaterThanOrEqual(15);

    const releaseSkip = await memory.hold('ev:skip');
    await work.skip();
    await releaseSkip();
    expect(events.filter((e) => e.name === 'ev:skip').map((e) => e.type)).toEqual(['answered', 'contended', 'skipped']);

    const releaseWait = await memory.hold('ev:wait');
    await expect(work.wait()).rejects.toThrow(/Timed out/);
    await releaseWait();
    expect(events.find((e) => e.type === 'timeout' && e.name === 'ev:wait')).toMatchObject({
      waitMs: expect.any(Number),
    });

    await work.long();
    expect(events.filter((e) => e.type === 'extended' && e.name === 'ev:long').length).toBeGreaterThanOrEqual(2);

    await work.lost();
    expect(events.find((e) => e.type === 'lost' && e.name === 'ev:lost')).toMatchObject({
      reason: expect.stringContaining('renew is off'),
    });

    memory.failAcquire = true;
    await expect(work.fast()).rejects.toBeInstanceOf(LockStoreError);
    const storeError = events.find((e) => e.type === 'store-error');
    expect(storeError).toMatchObject({ name: 'ev:fast', operation: 'acquire' });
    await ref.close();
  });
});

@Injectable()
class LockMetrics {
  readonly seen: LockEvent[] = [];

  @OnEvent('lock.*')
  record(event: LockEvent) {
    this.seen.push(event);
  }
}

describe('onEvent bridged to @nestjs/event-emitter (the README recipe)', () => {
  test('listeners of lock.<type> receive the events, with the lock name', async () => {
    const ref = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot({ wildcard: true }),
        LockModule.forRootAsync({
          inject: [EventEmitter2],
          useFactory: (events: EventEmitter2) => ({ onEvent: (e: LockEvent) => events.emit(`lock.${e.type}`, e) }),
        }),
      ],
      providers: [Work, LockMetrics],
    }).compile();
    await ref.init();
    await ref.get(Work).fast();
    const metrics = ref.get(LockMetrics);
    expect(metrics.seen.map((e) => [e.type, e.name])).toEqual([
      ['acquired', 'ev:fast'],
      ['answered', 'ev:fast'],
      ['released', 'ev:fast'],
    ]);
    await ref.close();
  });
});
