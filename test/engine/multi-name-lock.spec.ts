/**
 * Several names at once (`withLock(names)`, `acquire(names)`,
 * `tryAcquire(names)`): canonical order, all or none, one fencing token per
 * name, one handle over all of them (signal, extend, release), scope and
 * reentrancy per name, events per name. Against the in-memory store, and a
 * fake networked store (several managers on it are several processes).
 */
import {
  InMemoryLockProvider,
  LockAcquireError,
  LockLostError,
  LockManager,
  LockOptionsError,
  LockReentryError,
  LockStoreError,
  currentLock,
  type LockAcquireRequest,
  type LockBatchRequest,
  type LockEvent,
  type LockHandle,
  type LockManagerOptions,
} from '../../lib/index.js';
import { BatchAcquiringFakeLockProvider, FakeLockProvider } from '../support/fake-lock-provider.js';
import { sleep } from '../support/sleep.js';

const managers: LockManager[] = [];
function manager(options: Partial<LockManagerOptions> = {}): {
  m: LockManager;
  memory: InMemoryLockProvider;
  events: LockEvent[];
} {
  const memory = (options.provider as InMemoryLockProvider | undefined) ?? new InMemoryLockProvider();
  const events: LockEvent[] = [];
  const m = new LockManager({ provider: memory, onEvent: (e) => events.push(e), ...options });
  managers.push(m);
  return { m, memory, events };
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

/** An in-memory store whose acquire fails for one key, as a store that breaks in the middle of a multi-name call. */
class FailingOnKeyProvider extends InMemoryLockProvider {
  constructor(private readonly failingKey: string) {
    super();
  }
  acquire(request: LockAcquireRequest) {
    if (request.key === this.failingKey) throw new LockStoreError('acquire', 'connection reset');
    return super.acquire(request);
  }
  /** Refused when a key is held; else fails when the failing key is one of them, leaving none held. */
  acquireMany(requests: readonly LockBatchRequest[]) {
    const grants = super.acquireMany(requests);
    if (!grants || !requests.some((r) => r.key === this.failingKey)) return grants;
    for (const r of requests) super.release(r.key, r.owner);
    throw new LockStoreError('acquire', 'connection reset');
  }
}

describe('a lock of several names', () => {
  test('takes them in sorted order, duplicates collapsed, with one fencing token per name', async () => {
    const { m, memory } = manager();
    const asked: string[] = [];
    const taken = await m.withLock(['b', 'a', 'c', 'b'], (lock) => {
      asked.push(...['a', 'b', 'c'].filter((n) => memory.isHeld(n)));
      return lock;
    });
    expect(asked).toEqual(['a', 'b', 'c']);
    expect(taken!.names).toEqual(['a', 'b', 'c']);
    expect(taken!.name).toBe('a,b,c');
    expect(taken!.key).toBe('lock:a,lock:b,lock:c');
    expect(Object.keys(taken!.fencingTokens)).toEqual(['a', 'b', 'c']);
    for (const token of Object.values(taken!.fencingTokens)) expect(token).toBeGreaterThan(0);
    expect(taken!.fencingToken).toBe(taken!.fencingTokens.a);
    expect(taken!.held).toBe(false);
    expect(['a', 'b', 'c'].some((n) => memory.isHeld(n))).toBe(false);
  });

  test("each name's token grows with each grant of that name", async () => {
    const { m } = manager();
    const first = await m.acquire(['x', 'y']);
    await first.release();
    const single = await m.acquire('y');
    await single.release();
    const second = await m.acquire(['y', 'x']);
    expect(second.fencingTokens.x).toBeGreaterThan(first.fencingTokens.x);
    expect(second.fencingTokens.y).toBeGreaterThan(single.fencingToken);
    expect(single.fencingToken).toBeGreaterThan(first.fencingTokens.y);
    expect(await second.release()).toBe(true);
    expect(await second.release()).toBe(false);
  });

  test("a single lock's handle has names [name] and fencingTokens { name: token }; a list of one name is that single lock", async () => {
    const { m } = manager();
    await m.withLock('solo', (lock) => {
      expect(lock.names).toEqual(['solo']);
      expect(lock.fencingTokens).toEqual({ solo: lock.fencingToken });
    });
    await m.withLock(['solo', 'solo'], (lock) => {
      expect(lock.name).toBe('solo');
      expect(lock.names).toEqual(['solo']);
    });
  });

  test('releases every name in finally when fn throws', async () => {
    const { m, memory } = manager();
    const boom = new Error('boom');
    await expect(
      m.withLock(['a', 'b'], async () => {
        await sleep(1);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(memory.isHeld('a') || memory.isHeld('b')).toBe(false);
  });

  test.each([
    ['an empty list', [], /withLock\(\): the list of lock names is empty.*Give at least one name/],
    [
      'a list with an empty name',
      ['a', ''],
      /withLock\(\) \(names\[1\]\): a lock name must be a non-empty string, got ""/,
    ],
    [
      'a list with a non-string',
      ['a', 7],
      /withLock\(\) \(names\[1\]\): a lock name must be a non-empty string, got 7/,
    ],
  ])('%s fails with LockOptionsError', async (_what, names, message) => {
    const { m } = manager();
    await expect(m.withLock(names as string[], () => 1)).rejects.toThrow(LockOptionsError);
    await expect(m.withLock(names as string[], () => 1)).rejects.toThrow(message);
    await expect(m.acquire(names as string[])).rejects.toThrow(LockOptionsError);
    await expect(m.tryAcquire(names as string[])).rejects.toThrow(LockOptionsError);
  });
});

describe('all or none', () => {
  test("a name held by another owner: onHeld 'throw' names it, fn does not run, and none of the names is left held", async () => {
    const { m, memory, events } = manager();
    const release = await memory.hold('b');
    let ran = false;
    const error = await m
      .withLock(['c', 'a', 'b'], () => {
        ran = true;
      })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockAcquireError);
    expect((error as LockAcquireError).lockName).toBe('b');
    expect((error as LockAcquireError).reason).toBe('held');
    expect(ran).toBe(false);
    expect(memory.isHeld('a') || memory.isHeld('c')).toBe(false);
    // a was taken and given back; c was never asked.
    expect(events.filter((e) => e.type === 'acquired').map((e) => e.name)).toEqual(['a']);
    expect(events.filter((e) => e.type === 'released').map((e) => e.name)).toEqual(['a']);
    await release();
    expect(await m.withLock(['a', 'b', 'c'], () => 'now')).toBe('now');
  });

  test("onHeld 'skip' returns undefined, tryAcquire returns null, both leaving nothing held", async () => {
    const { m, memory, events } = manager();
    await memory.hold('b');
    expect(await m.withLock(['a', 'b'], () => 'ran', { onHeld: 'skip' })).toBeUndefined();
    expect(events.some((e) => e.type === 'skipped' && e.name === 'b')).toBe(true);
    expect(await m.tryAcquire(['a', 'b'])).toBeNull();
    expect(memory.isHeld('a')).toBe(false);
  });

  test('a wait that runs out releases what it took; waitTimeout bounds the whole call', async () => {
    const { m, memory } = manager();
    await memory.hold('b');
    const started = performance.now();
    const error = await m.acquire(['a', 'b'], { waitTimeout: 100 }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockAcquireError);
    expect((error as LockAcquireError).reason).toBe('timeout');
    expect((error as LockAcquireError).lockName).toBe('b');
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
    expect(memory.isHeld('a')).toBe(false);
    await expect(m.withLock(['a', 'b'], () => 1, { onHeld: 'wait', waitTimeout: 50 })).rejects.toBeInstanceOf(
      LockAcquireError,
    );
    expect(memory.isHeld('a')).toBe(false);
  });

  test("an aborted wait throws the signal's reason and releases what it took", async () => {
    const { m, memory } = manager();
    await memory.hold('b');
    const controller = new AbortController();
    const reason = new Error('client went away');
    setTimeout(() => controller.abort(reason), 50);
    await expect(m.acquire(['a', 'b'], { signal: controller.signal })).rejects.toBe(reason);
    expect(memory.isHeld('a')).toBe(false);
  });

  test('a store failure on a later name releases the earlier ones and throws LockStoreError naming the lock', async () => {
    const provider = new FailingOnKeyProvider('lock:b');
    const { m } = manager({ provider });
    // (d held elsewhere: the one call for every name is refused, and the names are taken one by one)
    await provider.hold('d');
    const calls: Array<() => Promise<unknown>> = [
      () => m.withLock(['a', 'b', 'c', 'd'], () => 1),
      () => m.acquire(['a', 'b', 'd']),
      () => m.tryAcquire(['a', 'b', 'd']),
    ];
    for (const call of calls) {
      const error = await Promise.resolve()
        .then(call)
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as LockStoreError).lockName).toBe('b');
      expect(provider.isHeld('a')).toBe(false);
    }
  });

  test('a store failure of the one call for every name throws LockStoreError naming the names, and leaves none held', async () => {
    const provider = new FailingOnKeyProvider('lock:b');
    const { m, events } = manager({ provider });
    const calls: Array<() => Promise<unknown>> = [
      () => m.withLock(['a', 'b', 'c'], () => 1),
      () => m.acquire(['a', 'b', 'c']),
      () => m.tryAcquire(['a', 'b', 'c']),
    ];
    for (const call of calls) {
      const error = await Promise.resolve()
        .then(call)
        .catch((err: unknown) => err);
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as LockStoreError).lockName).toBe('a,b,c');
      expect(provider.isHeld('a') || provider.isHeld('b') || provider.isHeld('c')).toBe(false);
    }
    expect(events.filter((e) => e.type === 'store-error').map((e) => e.name)).toEqual(['a,b,c', 'a,b,c', 'a,b,c']);
    expect(
      events.filter((e) => e.type === 'answered').map((e) => e.type === 'answered' && `${e.name}:${e.outcome}`),
    ).toEqual([1, 2, 3].flatMap(() => ['a:store-error', 'b:store-error', 'c:store-error']));
  });

  test('callers of overlapping names in opposite orders, across processes, never deadlock and never overlap', async () => {
    const store = new FakeLockProvider();
    const processes = [0, 1, 2].map(() => new LockManager({ provider: store }));
    managers.push(...processes);
    const names = ['acct:1', 'acct:2', 'acct:3'];
    const inside = new Map<string, number>();
    let overlaps = 0;
    let done = 0;
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const locks = processes[i % processes.length];
      // Each caller asks for two or three names, in an order of its own: taken as given, these orders would deadlock at once.
      const orders = [names, [...names].reverse(), [names[1], names[0]], [names[2], names[0]]];
      const mine = orders[i % orders.length];
      calls.push(
        locks.withLock(
          mine,
          async (lock) => {
            for (const n of lock.names) {
              if (inside.get(n)) overlaps++;
              inside.set(n, 1);
            }
            await sleep(1);
            for (const n of lock.names) inside.set(n, 0);
            done++;
          },
          { onHeld: 'wait', waitTimeout: 20_000 },
        ),
      );
    }
    await Promise.all(calls);
    expect(done).toBe(60);
    expect(overlaps).toBe(0);
    for (const n of names) expect(store.isHeld('lock:' + n)).toBe(false);
  }, 60_000);
});

describe('the handle of several names', () => {
  test('extend extends every name; release releases every name', async () => {
    const store = new FakeLockProvider();
    const { m } = manager({ provider: store });
    const lock = await m.acquire(['a', 'b']);
    await lock.extend(10_000);
    expect(store.calls.extend).toBe(2);
    expect(await lock.release()).toBe(true);
    expect(store.calls.release).toBe(2);
    expect(store.isHeld('lock:a') || store.isHeld('lock:b')).toBe(false);
  });

  test("its signal aborts with a name's LockLostError when that name is lost; held turns false and extend throws", async () => {
    const { m, memory } = manager();
    const lock = await m.acquire(['a', 'b'], { ttl: 150, renew: false });
    const signal = lock.signal;
    expect(signal.aborted).toBe(false);
    expect(lock.held).toBe(true);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as LockLostError).lockName).toMatch(/^[ab]$/);
    expect(lock.held).toBe(false);
    await expect(lock.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(await lock.release()).toBe(false);
    expect(memory.isHeld('a') || memory.isHeld('b')).toBe(false);
  });

  test('a signal read after a loss is already aborted', async () => {
    const { m } = manager();
    const lock = await m.acquire(['a', 'b'], { ttl: 100, renew: false });
    await sleep(400);
    expect(lock.signal.aborted).toBe(true);
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
  });

  test('events come per name, as for single locks', async () => {
    const { m, events } = manager();
    await m.withLock(['b', 'a'], () => 1);
    expect(
      events.filter((e) => e.type === 'acquired' || e.type === 'released').map((e) => `${e.type}:${e.name}`),
    ).toEqual(['acquired:a', 'acquired:b', 'released:a', 'released:b']);
  });
});

describe('scope and reentrancy, per name', () => {
  test('current() finds the lock by any of its names', async () => {
    const { m } = manager();
    await m.withLock(['a', 'b'], (lock) => {
      expect(m.current()).toBe(lock);
      expect(m.current('a')).toBe(lock);
      expect(m.current('b')).toBe(lock);
      expect(currentLock('b')).toBe(lock);
      expect(m.current('c')).toBeUndefined();
    });
  });

  test('a nested call for a name the outer lock holds fails with LockReentryError naming it', async () => {
    const { m } = manager();
    await m.withLock(['a', 'b'], async () => {
      await expect(m.withLock('b', () => 1)).rejects.toThrow(LockReentryError);
      const error = await m.withLock(['b', 'c'], () => 1).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(LockReentryError);
      expect((error as LockReentryError).lockName).toBe('b');
    });
    await m.withLock('a', async () => {
      await expect(m.withLock(['a', 'z'], () => 1)).rejects.toThrow(/Lock "a" is already held by this call chain/);
    });
  });

  test('with reentrant, a nested call runs under the outer lock for the names it holds and takes only the others', async () => {
    const { m, memory } = manager();
    await m.withLock(['a', 'b'], async (outer) => {
      expect(await m.withLock('a', (lock) => lock, { reentrant: true })).toBe(outer);
      const inner = await m.withLock(
        ['b', 'c'],
        (lock) => {
          expect(memory.isHeld('c')).toBe(true);
          expect(m.current('c')).toBe(lock);
          return lock;
        },
        { reentrant: true },
      );
      expect(inner!.names).toEqual(['b', 'c']);
      expect(inner!.fencingTokens.b).toBe(outer.fencingTokens.b);
      // The inner call released c only.
      expect(memory.isHeld('c')).toBe(false);
      expect(memory.isHeld('b')).toBe(true);
      expect(outer.held).toBe(true);
      const all = await m.withLock(['a', 'b'], (lock: LockHandle) => lock.names, { reentrant: true });
      expect(all).toEqual(['a', 'b']);
      expect(outer.held).toBe(true);
    });
    expect(memory.isHeld('a') || memory.isHeld('b')).toBe(false);
  });
});

describe('one store call for every name (a store with acquireMany)', () => {
  test('free names: one acquireMany call takes them all; each is then a single lock (own token, extend, release, events)', async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const { m, events } = manager({ provider: store });
    const lock = await m.acquire(['c', 'a', 'b']);
    expect(store.calls).toMatchObject({ acquireMany: 1, acquire: 0 });
    expect(store.requests).toHaveLength(0);
    expect(lock.names).toEqual(['a', 'b', 'c']);
    for (const n of ['a', 'b', 'c']) expect(store.isHeld(`lock:${n}`)).toBe(true);
    expect(new Set(Object.values(lock.fencingTokens)).size).toBeGreaterThan(0);
    await lock.extend(10_000);
    expect(store.calls.extend).toBe(3);
    expect(events.filter((e) => e.type === 'acquired').map((e) => e.name)).toEqual(['a', 'b', 'c']);
    expect(
      events
        .filter((e) => e.type === 'answered')
        .map((e) => e.type === 'answered' && `${e.name}:${e.outcome}:${e.wait}`),
    ).toEqual(['a:acquired:true', 'b:acquired:true', 'c:acquired:true']);
    expect(events.filter((e) => e.type === 'waiting').map((e) => e.name)).toEqual(['a', 'b', 'c']);
    expect(await lock.release()).toBe(true);
    expect(store.calls.release).toBe(3);
    for (const n of ['a', 'b', 'c']) expect(store.isHeld(`lock:${n}`)).toBe(false);
    // A later grant of a name draws above the batch's token.
    const single = await m.acquire('b');
    expect(single.fencingToken).toBeGreaterThan(lock.fencingTokens.b);
    await single.release();
  });

  test('a name held elsewhere: the batch is refused (nothing taken), then the names are taken one by one, waiting in the queue of the held one', async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const other = manager({ provider: store }).m;
    const { m } = manager({ provider: store });
    const held = await other.acquire('b');
    const taking = m.acquire(['a', 'b', 'c'], { waitTimeout: 5_000 });
    await sleep(20);
    expect(store.refused).toBe(1);
    // One by one, in canonical order: a taken, b queued behind its holder, c not yet asked.
    expect(store.isHeld('lock:a')).toBe(true);
    expect(store.waiting('lock:b')).toBe(1);
    expect(store.isHeld('lock:c')).toBe(false);
    await held.release();
    const lock = await taking;
    expect(lock.names).toEqual(['a', 'b', 'c']);
    expect(lock.fencingTokens.b).toBeGreaterThan(held.fencingToken);
    expect(store.requests.map((r) => r.key)).toEqual(['lock:b', 'lock:a', 'lock:b', 'lock:c']);
    await lock.release();
  });

  test('tries and onHeld skip: a refused batch falls back, names the held name, and leaves nothing held', async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const other = manager({ provider: store }).m;
    const { m } = manager({ provider: store });
    const held = await other.acquire('b');
    expect(await m.tryAcquire(['a', 'b'])).toBeNull();
    const error = await m.withLock(['a', 'b', 'c'], () => 1).catch((err: unknown) => err);
    expect((error as LockAcquireError).lockName).toBe('b');
    expect(await m.withLock(['a', 'b'], () => 1, { onHeld: 'skip' })).toBeUndefined();
    expect(store.refused).toBe(3);
    expect(store.isHeld('lock:a') || store.isHeld('lock:c')).toBe(false);
    await held.release();
    expect(await m.withLock(['a', 'b'], () => 'ran')).toBe('ran');
    expect(store.calls.acquireMany).toBe(4);
  });

  test('a store failure of the batch: LockStoreError, nothing held, no one-by-one attempt', async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const { m } = manager({ provider: store });
    store.breakDown();
    const error = await m.acquire(['a', 'b']).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as LockStoreError).lockName).toBe('a,b');
    expect(store.calls.acquire).toBe(0);
    store.recover();
    const lock = await m.acquire(['a', 'b']);
    expect(store.isHeld('lock:a') && store.isHeld('lock:b')).toBe(true);
    await lock.release();
  });

  test("a wait's batch reserves fencing blocks: a caller of this process that came meanwhile is handed a name on release, without the store", async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const { m } = manager({ provider: store });
    const first = m.acquire(['a', 'b']);
    // (the batch is at the store: b is busy in this process, so this caller queues here)
    const single = m.acquire('b', { waitTimeout: 5_000 });
    const f = await first;
    expect(store.calls.acquireMany).toBe(1);
    expect(store.waiting('lock:b')).toBe(0);
    await f.release();
    const s = await single;
    expect(s.fencingToken).toBe(f.fencingTokens.b + 1);
    expect(store.calls.acquire).toBe(0);
    await s.release();
  });

  test('a name a caller of this process holds: no batch; the call queues here behind it, then at the store', async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const { m } = manager({ provider: store });
    const held = await m.acquire('b');
    const both = m.acquire(['b', 'c'], { waitTimeout: 5_000 });
    await sleep(10);
    expect(store.calls.acquireMany).toBe(0);
    // Waiting in this process (not at the store), before c is asked.
    expect(store.waiting('lock:b')).toBe(0);
    expect(store.isHeld('lock:c')).toBe(false);
    await held.release();
    const lock = await both;
    expect(lock.names).toEqual(['b', 'c']);
    expect(lock.fencingTokens.b).toBeGreaterThan(held.fencingToken);
    await lock.release();
    for (const n of ['b', 'c']) expect(store.isHeld(`lock:${n}`)).toBe(false);
  });

  test('a semaphore or shared lock of several names takes the one-by-one path', async () => {
    const memory = new InMemoryLockProvider();
    const batch = memory.acquireMany.bind(memory);
    let batches = 0;
    memory.acquireMany = (requests) => (batches++, batch(requests));
    const { m } = manager({ provider: memory });
    await m.withLock(['a', 'b'], () => 1, { limit: 2 });
    await m.withLock(['a', 'b'], () => 1, { mode: 'shared' });
    expect(batches).toBe(0);
    await m.withLock(['a', 'b'], () => 1);
    expect(batches).toBe(1);
  });

  test('overlapping names across processes, with batches and fallbacks: never deadlock, never overlap', async () => {
    const store = new BatchAcquiringFakeLockProvider();
    const processes = [0, 1, 2].map(() => new LockManager({ provider: store }));
    managers.push(...processes);
    const names = ['acct:1', 'acct:2', 'acct:3'];
    const inside = new Map<string, number>();
    let overlaps = 0;
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const orders = [names, [...names].reverse(), [names[1], names[0]], [names[2], names[0]], [names[1]]];
      calls.push(
        processes[i % 3].withLock(
          orders[i % orders.length],
          async (lock) => {
            for (const n of lock.names) {
              if (inside.get(n)) overlaps++;
              inside.set(n, 1);
            }
            await sleep(1);
            for (const n of lock.names) inside.set(n, 0);
          },
          { onHeld: 'wait', waitTimeout: 20_000 },
        ),
      );
    }
    await Promise.all(calls);
    expect(overlaps).toBe(0);
    expect(store.calls.acquireMany).toBeGreaterThan(0);
    for (const n of names) expect(store.isHeld('lock:' + n)).toBe(false);
  }, 60_000);
});
