/**
 * `@Locked` with `limit` and `mode` (semaphores, read/write locks): checked
 * where the decorator is applied, passed to the store on each call, and the
 * same under `@nestjs/schedule`.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { LockModule, LockOptionsError, Locked } from '../../lib/index.js';
import { FakeLockProvider } from '../support/fake-lock-provider.js';

/** A fake store that says it supports semaphores and shared locks; it records what it is asked. */
class SupportingFakeProvider extends FakeLockProvider {
  readonly supports = { limit: true, shared: true };
}

@Injectable()
class Catalogue {
  @Locked('catalogue', { mode: 'shared' })
  async read() {
    return 'read';
  }

  @Locked('catalogue')
  async write() {
    return 'written';
  }

  @Locked('exports', { limit: 3 })
  async export() {
    return 'exported';
  }

  ticks = 0;
  @Interval(20)
  @Locked('tick', { limit: 2 })
  tick() {
    this.ticks++;
  }
}

async function boot(provider: FakeLockProvider) {
  const ref = await Test.createTestingModule({ imports: [LockModule.forRoot({ provider }), ScheduleModule.forRoot()], providers: [Catalogue] }).compile();
  await ref.init();
  return ref;
}

describe('@Locked with limit and mode', () => {
  test.each([
    [{ limit: 0 }, /@Locked\(\) on Bad\.run: limit must be an integer >= 1, got 0/],
    [{ limit: 2, mode: 'shared' as const }, /@Locked\(\) on Bad\.run: limit \(2\) cannot go with mode: 'shared'/],
    [{ mode: 'read' as 'shared' }, /@Locked\(\) on Bad\.run: mode must be 'shared' or 'exclusive'/],
  ])('%o fails where the decorator is applied', (options, message) => {
    expect(() => {
      class Bad {
        @Locked('x', options)
        run() {}
      }
      return Bad;
    }).toThrow(LockOptionsError);
    expect(() => {
      class Bad {
        @Locked('x', options)
        run() {}
      }
      return Bad;
    }).toThrow(message);
  });

  test('each call asks the store with its limit or mode; the scheduler keeps its metadata and ticks under the semaphore', async () => {
    const store = new SupportingFakeProvider();
    const ref = await boot(store);
    try {
      const catalogue = ref.get(Catalogue);
      expect(await catalogue.read()).toBe('read');
      expect(await catalogue.write()).toBe('written');
      expect(await catalogue.export()).toBe('exported');
      expect(ref.get(SchedulerRegistry).getIntervals()).toHaveLength(1);
      for (let i = 0; i < 200 && catalogue.ticks === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(catalogue.ticks).toBeGreaterThan(0);
      const byKey = (key: string) => store.requests.filter((r) => r.key === key);
      expect(byKey('lock:catalogue').map((r) => [r.mode, r.limit])).toEqual([
        ['shared', undefined],
        [undefined, undefined],
      ]);
      expect(byKey('lock:exports')[0]).toMatchObject({ limit: 3 });
      expect(byKey('lock:tick')[0]).toMatchObject({ limit: 2, wait: false });
    } finally {
      await ref.close();
    }
  });

  test('on a store that cannot take them, the call fails with LockOptionsError and the method does not run', async () => {
    const store = new FakeLockProvider();
    const ref = await Test.createTestingModule({ imports: [LockModule.forRoot({ provider: store })], providers: [Catalogue] }).compile();
    try {
      await expect(ref.get(Catalogue).read()).rejects.toThrow(/the "fake" store cannot take mode: 'shared'/);
      await expect(ref.get(Catalogue).export()).rejects.toThrow(/the "fake" store cannot take limit: 3/);
      expect(store.calls.acquire).toBe(0);
    } finally {
      await ref.close();
    }
  });
});
