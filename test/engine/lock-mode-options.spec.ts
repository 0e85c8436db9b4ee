/**
 * The `limit` and `mode` call options in the engine: how they are checked,
 * what a store that does not list them in `supports` answers, what reaches
 * the store (`limit` only above 1, `mode` only when shared, so that a store
 * without support never sees them), and that only plain locks use the local
 * hand-off. The semantics of semaphores and read/write locks are the stores'
 * (the conformance kit, lib/testing/).
 */
import { LockManager, LockOptionsError, type LockAcquireRequest, type LockCallOptions } from '../../lib/index.js';
import { FakeLockProvider } from '../support/fake-lock-provider.js';
import { MinimalLockProvider } from '../support/minimal-lock-provider.js';

/** A fake store that says it supports semaphores and shared locks; it records what it is asked (and grants like a plain lock). */
class SupportingFakeProvider extends FakeLockProvider {
  readonly supports = { limit: true, shared: true };
}

const managers: LockManager[] = [];
function manager(provider: FakeLockProvider | MinimalLockProvider): LockManager {
  const m = new LockManager({ provider });
  managers.push(m);
  return m;
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

async function errorOf(run: () => unknown): Promise<Error> {
  try {
    await run();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

describe('limit and mode are checked where they come in', () => {
  test.each<[string, LockCallOptions, RegExp]>([
    ['limit 0', { limit: 0 }, /withLock\("a"\): limit must be an integer >= 1, got 0\./],
    ['a fractional limit', { limit: 1.5 }, /limit must be an integer >= 1, got 1\.5/],
    ['limit Infinity', { limit: Infinity }, /limit must be an integer >= 1, got Infinity/],
    ['a string limit', { limit: '3' as unknown as number }, /limit must be an integer >= 1, got "3"/],
    ['an unknown mode', { mode: 'read' as 'shared' }, /mode must be 'shared' or 'exclusive', got "read"/],
    [
      'limit with a shared mode',
      { limit: 3, mode: 'shared' },
      /limit \(3\) cannot go with mode: 'shared'.*Leave out limit for a read lock, or leave out mode: 'shared'/,
    ],
    ['limit 1 with a shared mode', { limit: 1, mode: 'shared' }, /limit \(1\) cannot go with mode: 'shared'/],
  ])('%s: LockOptionsError saying what to give, before the store is asked', async (_what, options, message) => {
    const store = new SupportingFakeProvider();
    const locks = manager(store);
    const error = await errorOf(() => locks.withLock('a', () => 1, options));
    expect(error).toBeInstanceOf(LockOptionsError);
    expect(error.message).toMatch(message);
    expect(store.calls.acquire).toBe(0);
  });

  test('every entry point checks them', async () => {
    const locks = manager(new SupportingFakeProvider());
    await expect(locks.acquire('a', { limit: -1 })).rejects.toThrow(/acquire\("a"\): limit must be an integer >= 1/);
    await expect(locks.tryAcquire('a', { mode: 'write' as 'exclusive' })).rejects.toThrow(
      /tryAcquire\("a"\): mode must be/,
    );
  });
});

describe('a store that does not support them', () => {
  test.each<[string, FakeLockProvider | MinimalLockProvider]>([
    ['a store without supports', new FakeLockProvider()],
    ['a custom store with only the required methods', new MinimalLockProvider('custom')],
  ])(
    '%s refuses a semaphore and a shared lock with LockOptionsError naming the store and what to use instead',
    async (_what, store) => {
      const locks = manager(store);
      const limit = await errorOf(() => locks.withLock('jobs', () => 1, { limit: 3 }));
      expect(limit).toBeInstanceOf(LockOptionsError);
      expect(limit.message).toContain(`Lock "jobs": the "${store.kind}" store cannot take limit: 3`);
      expect(limit.message).toMatch(/Use a store that supports it .*or leave out limit for a plain lock\./);
      const shared = await errorOf(() => locks.acquire('jobs', { mode: 'shared' }));
      expect(shared).toBeInstanceOf(LockOptionsError);
      expect(shared.message).toContain(`Lock "jobs": the "${store.kind}" store cannot take mode: 'shared'`);
      expect(shared.message).toMatch(/leave out mode: 'shared' for a plain exclusive lock\./);
      await expect(locks.tryAcquire('jobs', { limit: 2 })).rejects.toBeInstanceOf(LockOptionsError);
      if (store instanceof FakeLockProvider) expect(store.calls.acquire).toBe(0);
    },
  );

  test('takes a plain lock given as limit 1 or mode exclusive, which every store supports', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    expect(await locks.withLock('jobs', (lock) => lock.fencingToken, { limit: 1, mode: 'exclusive' })).toBeGreaterThan(
      0,
    );
    expect(store.calls.acquire).toBe(1);
  });

  test('refuses a store that supports one but not the other', async () => {
    const store = new (class extends FakeLockProvider {
      readonly supports = { limit: true };
    })();
    const locks = manager(store);
    await expect(locks.withLock('jobs', () => 1, { limit: 2 })).resolves.toBe(1);
    await expect(locks.withLock('jobs', () => 1, { mode: 'shared' })).rejects.toThrow(/cannot take mode: 'shared'/);
  });
});

describe('what reaches the store', () => {
  const keys = (r: LockAcquireRequest): string[] =>
    Object.keys(r).filter((k) => r[k as keyof LockAcquireRequest] !== undefined);

  test('limit only above 1 and mode only when shared; a plain lock is asked as before', async () => {
    const store = new SupportingFakeProvider();
    const locks = manager(store);
    await locks.withLock('a', () => 1, { limit: 3 });
    await locks.withLock('b', () => 1, { mode: 'shared' });
    await locks.withLock('c', () => 1, { limit: 1, mode: 'exclusive' });
    await locks.withLock('d', () => 1);
    const [a, b, c, d] = store.requests;
    expect(a).toMatchObject({ key: 'lock:a', limit: 3 });
    expect('mode' in a).toBe(false);
    expect(b).toMatchObject({ key: 'lock:b', mode: 'shared' });
    expect('limit' in b).toBe(false);
    expect('limit' in c || 'mode' in c).toBe(false);
    expect(keys(c)).toEqual(keys(d));
  });

  test('a waiting semaphore or shared caller reserves no block of fencing tokens; a plain waiter does', async () => {
    const store = new SupportingFakeProvider();
    const locks = manager(store);
    await (await locks.acquire('s', { limit: 2 })).release();
    await (await locks.acquire('r', { mode: 'shared' })).release();
    await (await locks.acquire('p')).release();
    expect(store.requests.map((r) => r.fences)).toEqual([undefined, undefined, 16]);
  });

  test('ttl, wait, waitTimeout and signal go with them', async () => {
    const store = new SupportingFakeProvider();
    const locks = manager(store);
    const signal = new AbortController().signal;
    await (await locks.acquire('s', { limit: 4, ttl: 5_000, waitTimeout: 60_000, signal })).release();
    expect(store.requests[0]).toMatchObject({
      key: 'lock:s',
      ttl: 5_000,
      wait: true,
      waitTimeout: 60_000,
      signal,
      limit: 4,
    });
  });
});

describe('local hand-off is for plain locks only', () => {
  test('a shared try is not answered "held" from this process while a plain caller holds the name: the store answers it', async () => {
    const store = new SupportingFakeProvider();
    const locks = manager(store);
    const writer = await locks.acquire('doc');
    expect(store.calls.acquire).toBe(1);
    expect(await locks.tryAcquire('doc', { mode: 'shared' })).toBeNull();
    expect(await locks.tryAcquire('doc', { limit: 2 })).toBeNull();
    expect(store.calls.acquire).toBe(3);
    await writer.release();
  });

  test("a waiting shared caller queues at the store, not behind this process's holder; plain waiters still queue in-process", async () => {
    const store = new SupportingFakeProvider();
    const locks = manager(store);
    const writer = await locks.acquire('doc');
    const reader = locks.acquire('doc', { mode: 'shared', waitTimeout: 60_000 });
    const plain = locks.acquire('doc', { waitTimeout: 60_000 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.waiting('lock:doc')).toBe(1);
    expect(store.calls.acquire).toBe(2);
    await writer.release();
    // The fake store grants like a plain lock: the reader (first at the store) gets it; the plain waiter then queues there.
    const read = await reader;
    expect(read.fencingTokens).toEqual({ doc: read.fencingToken });
    await read.release();
    await (await plain).release();
    expect(store.isHeld('lock:doc')).toBe(false);
  });
});
