/**
 * The local hand-off of semaphore permits (docs/engine.md, "Local
 * hand-off"), through LockManager's public API on a fake semaphore store
 * that counts its calls: a released permit passes to a caller of the same
 * process that waited before the store granted that permit, by one
 * `transfer` (a new owner, a fresh fencing token), at most PERMIT_HAND_OFFS
 * times in a row; never more holders than the limit; what happens when the
 * store no longer has the permit or fails. Against Redis, the multi-process
 * semaphore checks of test/stores/redis/primitives.multi-process.spec.ts
 * run with it on (the default).
 */
import { LockManager, type LockHandle, type LockModuleOptions } from '../../lib/index.js';
import { PERMIT_HAND_OFFS } from '../../lib/hand-off/permit-cohort.js';
import { FakePermitProvider } from '../support/fake-permit-provider.js';

const managers: LockManager[] = [];
/** A manager on `store`: one process. Several on one store are several processes. */
function manager(store: FakePermitProvider, options: Omit<LockModuleOptions, 'provider'> = {}): LockManager {
  const m = new LockManager({ provider: store, ...options });
  managers.push(m);
  return m;
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

let n = 0;
const unique = (label: string): string => `${label}:${++n}`;
const permit = (limit: number) => ({ onHeld: 'wait' as const, limit });
const ownerOf = (lock: LockHandle): string => (lock as unknown as { owner: string }).owner;
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Waits for a permit of `name`; once granted, notes `label` and the token, then releases (unless `keep`). */
function turn(
  locks: LockManager,
  name: string,
  limit: number,
  label: string,
  order: string[],
  tokens: number[],
  keep?: LockHandle[],
): Promise<void> {
  return locks.acquire(name, permit(limit)).then(async (lock) => {
    order.push(label);
    tokens.push(lock.fencingToken);
    if (keep) keep.push(lock);
    else await lock.release();
  });
}

describe('semaphore permits of one process', () => {
  test('a permit the store granted passes to the callers that waited before that grant, each by one transfer with its own owner and a larger token', async () => {
    const store = new FakePermitProvider();
    const locks = manager(store);
    const name = unique('sem');
    const key = locks.keyPrefix + name;
    const [p1, p2] = [await locks.acquire(name, permit(2)), await locks.acquire(name, permit(2))];
    const order: string[] = [];
    const tokens: number[] = [];
    const turns = ['a', 'b', 'c', 'd'].map((label) => turn(locks, name, 2, label, order, tokens));
    await tick();
    // One caller of the process queues at the store; the others wait in-process.
    expect(store.waiting(key)).toBe(1);
    expect(store.calls.acquire).toBe(3);
    await p1.release();
    await p2.release();
    await Promise.all(turns);

    expect([...order].sort()).toEqual(['a', 'b', 'c', 'd']);
    // The permits came back from the store to the caller at the store (then to the next to go there);
    // the callers that waited in-process before such a grant were handed a permit by a transfer.
    expect(store.calls.transfer).toBeGreaterThanOrEqual(1);
    expect(store.grants.filter((g) => g.by === 'transfer')).toHaveLength(store.calls.transfer);
    expect(store.calls.acquire + store.calls.transfer).toBe(6);
    expect(new Set(store.grants.map((g) => g.owner)).size).toBe(store.grants.length);
    expect(store.most.get(key)).toBe(2);
    // Every grant's token is above all earlier ones.
    expect(store.grants.map((g) => g.token)).toEqual(store.grants.map((_, i) => i + 1));
    expect(tokens.every((t) => t > p2.fencingToken)).toBe(true);
    expect(store.holding(key)).toBe(0);
  });

  test(`a permit goes back to the store after ${PERMIT_HAND_OFFS} hand-offs in a row, where another process's waiter takes it`, async () => {
    const store = new FakePermitProvider();
    const theirs = manager(store);
    const mine = manager(store);
    const name = unique('turns');
    const [b1, b2] = [await theirs.acquire(name, permit(2)), await theirs.acquire(name, permit(2))];
    const order: string[] = [];
    const tokens: number[] = [];
    const labels = Array.from({ length: 8 }, (_, i) => `a${i}`);
    const mineDone = labels.map((label) => turn(mine, name, 2, label, order, tokens));
    await tick();
    const kept: LockHandle[] = [];
    const theirsDone = turn(theirs, name, 2, 'b', order, tokens, kept);
    await tick();
    await b1.release();
    await new Promise((resolve) => setTimeout(resolve, 20));

    // a0 got the permit from the store, handed it on PERMIT_HAND_OFFS times, then it went back: to the other process's waiter.
    expect(order.slice(0, PERMIT_HAND_OFFS + 2)).toEqual([...labels.slice(0, PERMIT_HAND_OFFS + 1), 'b']);
    expect(store.calls.transfer).toBe(PERMIT_HAND_OFFS);
    await theirsDone;
    await kept[0]!.release();
    await b2.release();
    await Promise.all(mineDone);
    expect([...order].sort()).toEqual([...labels, 'b'].sort());
    expect(store.most.get(mine.keyPrefix + name)).toBe(2);
  });

  /**
   * `first` and `d` hold the two permits (`d` went to the store when `first`
   * was granted), `c` queues at the store, `a` and `b` wait in-process; each
   * keeps its permit until released here.
   */
  async function twoHeldThreeWaiting(store: FakePermitProvider, locks: LockManager, name: string) {
    const order: string[] = [];
    const kept: LockHandle[] = [];
    const done = ['first', 'a', 'b', 'c', 'd'].map((label) => turn(locks, name, 2, label, order, [], kept));
    await tick();
    const held = (label: string): LockHandle => kept[order.indexOf(label)]!;
    expect(order).toEqual(['first', 'd']);
    expect(store.waiting(locks.keyPrefix + name)).toBe(1);
    return { order, held, done };
  }

  test('when the store no longer has the releasing holder’s permit, the next caller queues at the store and gets one there', async () => {
    const store = new FakePermitProvider();
    const locks = manager(store);
    const name = unique('expired');
    const key = locks.keyPrefix + name;
    const { order, held, done } = await twoHeldThreeWaiting(store, locks, name);
    // `first`'s lease ends at the store (its process was paused): its permit goes to `c`, queued there.
    store.expire(key, ownerOf(held('first')));
    await tick();
    await held('first').release();
    await tick();
    // `c`'s grant sent `b` to the store; the transfer to `a` found no permit: `a` queued there too.
    expect(order).toEqual(['first', 'd', 'c']);
    expect(store.waiting(key)).toBe(2);
    await held('d').release();
    await tick();
    await held('c').release();
    await tick();
    await Promise.all([held('a').release(), held('b').release()]);
    await Promise.all(done);
    expect(order).toEqual(['first', 'd', 'c', 'b', 'a']);
    expect(store.calls.transfer).toBe(1);
    expect(store.grants.filter((g) => g.by === 'transfer')).toHaveLength(0);
    expect(store.most.get(key)).toBe(2);
    expect(store.holding(key)).toBe(0);
  });

  test('when a transfer fails, the permit is released at the store and the caller queues there on its own', async () => {
    const store = new FakePermitProvider();
    const locks = manager(store);
    const name = unique('failing');
    const key = locks.keyPrefix + name;
    const { order, held, done } = await twoHeldThreeWaiting(store, locks, name);
    store.failTransfers();
    await held('first').release();
    await tick();
    // `first`'s permit went back to the store, which granted it to `c`; `a` queued there.
    expect(order).toEqual(['first', 'd', 'c']);
    expect(store.waiting(key)).toBe(1);
    for (const label of ['d', 'c']) {
      await held(label).release();
      await tick();
    }
    await Promise.all([held('a').release(), held('b').release()]);
    await Promise.all(done);
    expect([...order].sort()).toEqual(['a', 'b', 'c', 'd', 'first']);
    expect(store.calls.transfer).toBe(2);
    expect(store.grants.filter((g) => g.by === 'transfer')).toHaveLength(0);
    expect(store.most.get(key)).toBe(2);
    expect(store.holding(key)).toBe(0);
  });

  test('with localHandOff: false, every caller goes to the store', async () => {
    const store = new FakePermitProvider();
    const locks = manager(store, { localHandOff: false });
    const name = unique('off');
    const first = await locks.acquire(name, permit(2));
    const order: string[] = [];
    const turns = ['a', 'b', 'c', 'd'].map((label) => turn(locks, name, 2, label, order, []));
    await first.release();
    await Promise.all(turns);
    expect([...order].sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(store.calls).toMatchObject({ acquire: 5, release: 5, transfer: 0 });
  });

  test('a caller with another limit does not join the callers of the first limit: it asks the store', async () => {
    const store = new FakePermitProvider();
    const locks = manager(store);
    const name = unique('limits');
    const first = await locks.acquire(name, permit(2));
    const queued = locks.acquire(name, permit(2));
    const other = locks.acquire(name, permit(3));
    await tick();
    expect(store.calls.acquire).toBe(3);
    await first.release();
    const [a, b] = await Promise.all([queued, other]);
    await a.release();
    await b.release();
  });
});
