/**
 * `@Locked` with `limit` and `mode` (semaphores, read/write locks): checked
 * where the decorator is applied, passed to the store on each call, and the
 * same under `@nestjs/schedule`; and `@Locked` with several names (a static
 * list, or a name function that returns one): all or none.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import {
  InMemoryLockProvider,
  LockAcquireError,
  LockModule,
  LockOptionsError,
  Locked,
  currentLock,
} from '../../lib/index.js';
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
  const ref = await Test.createTestingModule({
    imports: [LockModule.forRoot({ provider }), ScheduleModule.forRoot()],
    providers: [Catalogue],
  }).compile();
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
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: store })],
      providers: [Catalogue],
    }).compile();
    try {
      await expect(ref.get(Catalogue).read()).rejects.toThrow(/the "fake" store cannot take mode: 'shared'/);
      await expect(ref.get(Catalogue).export()).rejects.toThrow(/the "fake" store cannot take limit: 3/);
      expect(store.calls.acquire).toBe(0);
    } finally {
      await ref.close();
    }
  });
});

@Injectable()
class Ledger {
  @Locked((from: string, to: string) => [`account:${from}`, `account:${to}`], { onHeld: 'wait', waitTimeout: 20_000 })
  async transfer(_from: string, _to: string) {
    const lock = currentLock()!;
    return { names: lock.names, tokens: lock.fencingTokens, name: lock.name };
  }

  @Locked(['ledger:b', 'ledger:a', 'ledger:b'])
  async audit() {
    return currentLock()!.names;
  }

  @Locked((ids: string[]) => ids.map((id) => `account:${id}`))
  async batch(_ids: string[]) {
    return currentLock()!.names;
  }

  ticks = 0;
  @Interval(20)
  @Locked(['tick:a', 'tick:b'])
  tick() {
    this.ticks++;
  }
}

describe('@Locked with several names', () => {
  async function bootLedger() {
    const memory = new InMemoryLockProvider();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory })],
      providers: [Ledger],
    }).compile();
    return { memory, ref, ledger: ref.get(Ledger) };
  }

  test('a name function that returns a list takes every name, in sorted order, with a token each', async () => {
    const { ref, ledger, memory } = await bootLedger();
    try {
      const seen = await ledger.transfer('9', '1');
      expect(seen.names).toEqual(['account:1', 'account:9']);
      expect(seen.name).toBe('account:1,account:9');
      expect(Object.keys(seen.tokens)).toEqual(['account:1', 'account:9']);
      expect(memory.isHeld('account:1') || memory.isHeld('account:9')).toBe(false);
      // Opposite orders at once: both run, one after the other.
      const both = await Promise.all([ledger.transfer('1', '9'), ledger.transfer('9', '1')]);
      expect(both.map((r) => r.names)).toEqual([
        ['account:1', 'account:9'],
        ['account:1', 'account:9'],
      ]);
      expect(await ledger.audit()).toEqual(['ledger:a', 'ledger:b']);
    } finally {
      await ref.close();
    }
  });

  test('a name held elsewhere: LockAcquireError naming it, the method does not run, no name is left held', async () => {
    const { ref, ledger, memory } = await bootLedger();
    try {
      await memory.hold('account:2');
      const error = await ledger.batch(['3', '2', '1']).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(LockAcquireError);
      expect((error as LockAcquireError).lockName).toBe('account:2');
      expect(memory.isHeld('account:1') || memory.isHeld('account:3')).toBe(false);
    } finally {
      await ref.close();
    }
  });

  test('a name function that returns an empty list fails with LockOptionsError saying what to give', async () => {
    const { ref, ledger } = await bootLedger();
    try {
      await expect(ledger.batch([])).rejects.toThrow(LockOptionsError);
      await expect(ledger.batch([])).rejects.toThrow(
        /@Locked\(\) on Ledger\.batch \(name function\): the list of lock names is empty.*Give at least one name/,
      );
    } finally {
      await ref.close();
    }
  });

  test('an empty static list fails where the decorator is applied', () => {
    expect(() => {
      class Bad {
        @Locked([])
        run() {}
      }
      return Bad;
    }).toThrow(/@Locked\(\) on Bad\.run: the list of lock names is empty/);
  });

  test('a scheduled task of several names skips its tick while one is held elsewhere, and runs once it is free', async () => {
    const memory = new InMemoryLockProvider();
    const release = await memory.hold('tick:b');
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: memory }), ScheduleModule.forRoot()],
      providers: [Ledger],
    }).compile();
    await ref.init();
    try {
      const ledger = ref.get(Ledger);
      await new Promise((r) => setTimeout(r, 200));
      expect(ledger.ticks).toBe(0);
      expect(memory.isHeld('tick:a')).toBe(false);
      await release();
      for (let i = 0; i < 200 && ledger.ticks === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(ledger.ticks).toBeGreaterThan(0);
    } finally {
      await ref.close();
    }
  });
});
