/**
 * The engine's callers of one process for one lock (`localHandOff`), through
 * LockManager's public API on a fake store that counts its calls: FIFO,
 * hand-off in-process without a store round trip for the waiters that came
 * before the store's grant, and what ends a local wait (timeout, abort, a
 * store failure, close). The same behaviour against Redis:
 * test/stores/redis/local-hand-off.spec.ts.
 */
import {
  LockAcquireError,
  LockError,
  LockManager,
  LockStoreError,
  type LockHandle,
  type LockModuleOptions,
} from '../../lib/index.js';
import { FakeLockProvider } from '../support/fake-lock-provider.js';

const managers: LockManager[] = [];
/** A manager on `store`: one process. Several on one store are several processes. */
function manager(store: FakeLockProvider, options: Omit<LockModuleOptions, 'provider'> = {}): LockManager {
  const m = new LockManager({ provider: store, ...options });
  managers.push(m);
  return m;
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

let n = 0;
const unique = (label: string): string => `${label}:${++n}`;

/** Waits for `name` on `locks`; once granted, notes `label` and the token, then releases. */
function turn(locks: LockManager, name: string, label: string, order: string[], tokens: number[] = []): Promise<void> {
  return locks.acquire(name).then(async (lock) => {
    order.push(label);
    tokens.push(lock.fencingToken);
    await lock.release();
  });
}

describe('callers of one process for one lock', () => {
  test('are served in arrival order; the ones that queued before the store granted the lock take it in turn without a store call', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('fifo');
    const first = await locks.acquire(name);
    const order: string[] = [];
    const tokens: number[] = [];
    const turns = ['a', 'b', 'c', 'd', 'e'].map((label) => turn(locks, name, label, order, tokens));
    // Only one caller of the process goes to the store at a time; the others wait in-process.
    expect(store.calls.acquire).toBe(1);
    await first.release();
    await Promise.all(turns);

    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(tokens[0]).toBeGreaterThan(first.fencingToken);
    // `a` came after `first` was granted: it queued at the store. b to e came before a's grant: handed over in-process.
    expect(store.calls).toMatchObject({ acquire: 2, release: 2 });
    expect(tokens.slice(1)).toEqual([tokens[0] + 1, tokens[0] + 2, tokens[0] + 3, tokens[0] + 4]);
    expect(store.isHeld(locks.keyPrefix + name)).toBe(false);
  });

  test.each([
    ['localHandOff: false', { localHandOff: false }, {}],
    ['a store that reserves no fencing tokens', {}, { fenceBlocks: false }],
  ])('with %s, every caller goes to the store, still in arrival order', async (_label, options, storeOptions) => {
    const store = new FakeLockProvider(storeOptions);
    const locks = manager(store, options);
    const name = unique('off');
    const first = await locks.acquire(name);
    const order: string[] = [];
    const turns = ['a', 'b', 'c'].map((label) => turn(locks, name, label, order));
    await first.release();
    await Promise.all(turns);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(store.calls).toMatchObject({ acquire: 4, release: 4 });
  });

  test('while another process holds the lock, one caller of this process queues at the store and the rest wait behind it in-process', async () => {
    const store = new FakeLockProvider();
    const other = manager(store);
    const locks = manager(store);
    const name = unique('behind-other');
    const key = locks.keyPrefix + name;
    const theirs = await other.acquire(name);
    const order: string[] = [];
    const turns = ['a', 'b', 'c', 'd'].map((label) => turn(locks, name, label, order));
    expect(store.waiting(key)).toBe(1);
    await theirs.release();
    await Promise.all(turns);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    // Theirs and a's acquire and release; b, c and d were handed the lock in-process.
    expect(store.calls).toMatchObject({ acquire: 2, release: 2 });
  });

  test('a caller that came after the store granted this process the lock queues at the store again, behind another process', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const other = manager(store);
    const name = unique('fair');
    const mine = await locks.acquire(name);
    const order: string[] = [];
    const late = turn(locks, name, 'this process, later', order);
    const theirs = turn(other, name, 'other process', order);
    await mine.release();
    await Promise.all([late, theirs]);
    expect(order).toEqual(['other process', 'this process, later']);
  });

  test('a turn hands the lock to callers that came after the grant until it has run half as many sections again as it started with; the next queues behind another process', async () => {
    const store = new FakeLockProvider();
    const other = manager(store);
    const locks = manager(store);
    const name = unique('turn');
    const theirs = await other.acquire(name);
    const order: string[] = [];
    const late: Array<Promise<void>> = [];
    // a queues at the store, b, c and d behind it in this process: a turn of 4 sections, room for 2 more.
    const first = locks.acquire(name).then(async (lock) => {
      order.push('a');
      // Callers that arrive during the turn, and then another process's caller (it queues at the store).
      late.push(...['e', 'f', 'g'].map((label) => turn(locks, name, label, order)));
      late.push(turn(other, name, 'other process', order));
      await lock.release();
    });
    const batch = ['b', 'c', 'd'].map((label) => turn(locks, name, label, order));
    expect(store.calls.acquire).toBe(2);
    await theirs.release();
    await Promise.all([first, ...batch]);
    await Promise.all(late);
    // e and f fit in the turn (6 sections); g queued at the store, behind the other process.
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'other process', 'g']);
    expect(store.calls).toMatchObject({ acquire: 4, release: 4 });
  });

  test('a turn that starts with one caller alone hands nothing to callers that came after the grant', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('alone');
    const order: string[] = [];
    const mine = await locks.acquire(name);
    const late = turn(locks, name, 'later', order);
    await mine.release();
    await late;
    // A turn of 1 section has no room for half a section more: the later caller went to the store.
    expect(store.calls).toMatchObject({ acquire: 2, release: 2 });
  });

  test('a try while a caller of this process holds the lock answers "held" without a store call', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('try');
    const held = await locks.acquire(name);
    expect(await locks.tryAcquire(name)).toBeNull();
    expect(store.calls.acquire).toBe(1);
    await held.release();
  });

  test('a caller that joins while this process waits at the store is handed the lock when the store grants it', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('slow-store');
    store.pause();
    const order: string[] = [];
    const turns = ['a', 'b', 'c'].map((label) => turn(locks, name, label, order));
    expect(store.calls.acquire).toBe(1);
    store.resume();
    await Promise.all(turns);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(store.calls).toMatchObject({ acquire: 1, release: 1 });
  });
});

describe('a wait in-process ends', () => {
  test('at its waitTimeout, with LockAcquireError, and the callers behind it move up', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('timeout');
    const holder = await locks.acquire(name);
    const started = performance.now();
    const impatient = locks.acquire(name, { waitTimeout: 200 });
    const patient = locks.acquire(name);
    await expect(impatient).rejects.toBeInstanceOf(LockAcquireError);
    await expect(impatient).rejects.toMatchObject({ reason: 'timeout', lockName: name });
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(store.calls.acquire).toBe(1); // it never reached the store
    await holder.release();
    const lock = await patient;
    expect(lock.held).toBe(true);
    await lock.release();
  });

  test('when its signal aborts, with the abort reason, and the callers behind it move up', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('abort');
    const holder = await locks.acquire(name);
    const controller = new AbortController();
    const cancelled = locks.acquire(name, { signal: controller.signal });
    const next = locks.acquire(name);
    const reason = new Error('the request was cancelled');
    controller.abort(reason);
    await expect(cancelled).rejects.toBe(reason);
    expect(store.calls.acquire).toBe(1);
    await holder.release();
    await (await next).release();
    expect(store.calls.acquire).toBe(2);
  });

  test('with LockStoreError for every caller when the store fails the one that waits there', async () => {
    const store = new FakeLockProvider();
    const other = manager(store);
    const locks = manager(store);
    const name = unique('store-down');
    const theirs = await other.acquire(name);
    const waiters = Promise.allSettled([locks.acquire(name), locks.acquire(name), locks.acquire(name)]);
    expect(store.waiting(locks.keyPrefix + name)).toBe(1);
    store.breakDown();
    for (const result of await waiters) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(LockStoreError);
      expect((result as PromiseRejectedResult).reason).toMatchObject({ lockName: name, operation: 'acquire' });
    }
    // Once the store answers again, the process locks as before.
    store.recover();
    await theirs.release();
    const lock = await locks.acquire(name, { waitTimeout: 5_000 });
    await lock.release();
  });

  test('with LockStoreError for every caller when the store is down as this process hands the lock back', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('release-down');
    const holder = await locks.acquire(name);
    const waiters = Promise.allSettled([locks.acquire(name), locks.acquire(name)]);
    store.breakDown();
    expect(await holder.release()).toBe(false); // a release never throws: it logs
    for (const result of await waiters) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(LockStoreError);
    }
  });

  test('when the manager closes: queued callers fail with LockError, the holder is released, later calls are refused', async () => {
    const store = new FakeLockProvider();
    const locks = manager(store);
    const name = unique('close');
    const holder: LockHandle = await locks.acquire(name);
    const waiters = Promise.allSettled([locks.acquire(name), locks.acquire(name, { waitTimeout: 60_000 })]);
    await locks.close();
    for (const result of await waiters) {
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason as LockError;
      expect(reason).toBeInstanceOf(LockError);
      expect(reason.lockName).toBe(name);
      expect(reason.message).toMatch(/closed .*while this call waited/);
    }
    expect(holder.held).toBe(false);
    expect(store.isHeld(locks.keyPrefix + name)).toBe(false);
    await expect(locks.acquire(name)).rejects.toThrow(/requested after the lock manager closed/);
  });
});
