/**
 * Renewal of many held locks on a store that renews many in one call
 * (`extendMany`), through LockManager's public API on a fake store that
 * counts its calls: the locks due together share a call (at most 1,000 locks
 * each), a lock that a call answers `false` for is lost alone, a failed call
 * is a failed renewal of each of its locks, and a store without `extendMany`
 * is renewed lock by lock as before.
 */
import { LockLostError, LockManager, type LockEvent, type LockHandle } from '../../lib/index.js';
import { BatchingFakeLockProvider, FakeLockProvider } from '../support/fake-lock-provider.js';
import { sleep } from '../support/sleep.js';

const managers: LockManager[] = [];
function manager(store: FakeLockProvider, ttl: number, events: LockEvent[] = []): LockManager {
  const m = new LockManager({ provider: store, ttl, onEvent: (e) => events.push(e) });
  managers.push(m);
  return m;
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

let n = 0;
/** Takes `count` distinct names at once. */
function holdMany(locks: LockManager, count: number): Promise<LockHandle[]> {
  const run = ++n;
  return Promise.all(Array.from({ length: count }, (_, i) => locks.acquire(`many:${run}:${i}`)));
}

/** Polls `check` every 10 ms for up to `ms`. */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(10);
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

describe('renewal on a store with extendMany', () => {
  test('locks taken together are renewed together: no per-lock extend, at least 50 locks a call', async () => {
    const store = new BatchingFakeLockProvider();
    const events: LockEvent[] = [];
    const handles = await holdMany(manager(store, 600, events), 300);
    // Renewal every 200 ms at most: wait for three rounds' worth of renewals.
    await until(() => sum(store.batches) >= 900);

    expect(sum(store.batches)).toBeGreaterThanOrEqual(900);
    expect(store.calls.extend).toBe(0);
    expect(sum(store.batches) / store.calls.extendMany).toBeGreaterThanOrEqual(50);
    expect(events.filter((e) => e.type === 'extended').length).toBeGreaterThanOrEqual(900);
    expect(handles.every((h) => h.held && !h.signal.aborted)).toBe(true);
  });

  test('a call renews at most 1,000 locks: more due at once go in several calls', async () => {
    const store = new BatchingFakeLockProvider();
    // Renewals fall due on a grid of ticks (a 12 s ttl: 1,024 ms ticks, first renewal ~4 s in). Taking 4,000 locks
    // spans at most a few ticks even on a loaded machine, so one tick holds at least 1,000 of them.
    const handles = await holdMany(manager(store, 12_000), 4_000);
    await until(() => sum(store.batches) >= 4_000, 30_000);

    expect(Math.max(...store.batches)).toBe(1_000);
    expect(store.calls.extend).toBe(0);
    expect(handles.every((h) => h.held)).toBe(true);
  }, 60_000);

  test('a lock answered false in a batch is lost alone: its signal aborts with LockLostError, the others stay held', async () => {
    const store = new BatchingFakeLockProvider();
    const events: LockEvent[] = [];
    const locks = manager(store, 600, events);
    const handles = await holdMany(locks, 20);
    const victim = handles[7];
    store.takeOver(victim.key);
    await until(() => victim.signal.aborted);
    const calls = store.calls.extendMany;
    // Another round for the others after the loss.
    await until(() => store.calls.extendMany > calls + 1);

    expect(victim.held).toBe(false);
    expect(victim.signal.reason).toBeInstanceOf(LockLostError);
    expect(handles.filter((h) => h.signal.aborted)).toEqual([victim]);
    expect(handles.filter((h) => h !== victim).every((h) => h.held)).toBe(true);
    expect(events.filter((e) => e.type === 'lost').map((e) => e.name)).toEqual([victim.name]);
  });

  test('a batch that fails is a failed renewal of each of its locks: store-error per lock, none lost, renewed again once the store is back', async () => {
    const store = new BatchingFakeLockProvider();
    const events: LockEvent[] = [];
    const handles = await holdMany(manager(store, 1_500, events), 10);
    // The first renewal (at about 500 ms) fails; the next (at about 1,000 ms) succeeds, well before the lease ends at 1,500 ms.
    store.breakDown();
    await until(() => events.filter((e) => e.type === 'store-error').length >= 10);
    store.recover();
    const failed = events.filter((e) => e.type === 'store-error');
    await until(() => events.filter((e) => e.type === 'extended').length >= 10);

    expect(failed.length).toBeGreaterThanOrEqual(10);
    expect(new Set(failed.map((e) => e.name))).toEqual(new Set(handles.map((h) => h.name)));
    expect(failed.every((e) => e.type === 'store-error' && e.operation === 'extend')).toBe(true);
    expect(events.filter((e) => e.type === 'extended').length).toBeGreaterThanOrEqual(10);
    expect(handles.every((h) => h.held && !h.signal.aborted)).toBe(true);
  });

  test('a store without extendMany is renewed lock by lock', async () => {
    const store = new FakeLockProvider();
    const handles = await holdMany(manager(store, 300), 20);
    await until(() => store.calls.extend >= 40);

    expect(store.calls.extend).toBeGreaterThanOrEqual(40);
    expect(store.calls.extendMany).toBe(0);
    expect(handles.every((h) => h.held)).toBe(true);
  });
});
