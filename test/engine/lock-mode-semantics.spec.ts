/**
 * Semaphores and read/write locks through LockManager on the in-memory
 * store (the store semantics themselves: the conformance kit, lib/testing/):
 * `limit` holders at once, shared readers together and never with a writer,
 * a waiting writer not overtaken by later readers, and both with several names.
 */
import { InMemoryLockProvider, LockManager, type LockCallOptions } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

const managers: LockManager[] = [];
function manager(): { m: LockManager; memory: InMemoryLockProvider } {
  const memory = new InMemoryLockProvider();
  const m = new LockManager({ provider: memory });
  managers.push(m);
  return { m, memory };
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

/** Runs `n` callers of `names` at once; returns the most that were inside together. */
async function mostAtOnce(
  m: LockManager,
  names: string | string[],
  n: number,
  options: LockCallOptions,
): Promise<number> {
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: n }, () =>
      m.withLock(
        names,
        async () => {
          most = Math.max(most, ++inside);
          await sleep(20);
          inside--;
        },
        { onHeld: 'wait', waitTimeout: 20_000, ...options },
      ),
    ),
  );
  return most;
}

describe('limit: a semaphore', () => {
  test('admits limit holders at once; the others wait their turn', async () => {
    const { m } = manager();
    expect(await mostAtOnce(m, 'exports', 8, { limit: 3 })).toBe(3);
  });

  test('a try beyond the limit answers null; each grant has its own growing token', async () => {
    const { m } = manager();
    const one = await m.acquire('exports', { limit: 2 });
    const two = await m.tryAcquire('exports', { limit: 2 });
    expect(two).not.toBeNull();
    expect(two!.fencingToken).toBeGreaterThan(one.fencingToken);
    expect(await m.tryAcquire('exports', { limit: 2 })).toBeNull();
    await one.release();
    const three = await m.tryAcquire('exports', { limit: 2 });
    expect(three!.fencingToken).toBeGreaterThan(two!.fencingToken);
    await Promise.all([two!.release(), three!.release()]);
  });
});

describe("mode: 'shared', a read lock", () => {
  test('readers hold together; a writer waits for them, and readers that come after a waiting writer wait behind it', async () => {
    const { m } = manager();
    expect(await mostAtOnce(m, 'catalogue', 5, { mode: 'shared' })).toBe(5);
    const readers = await Promise.all([
      m.acquire('catalogue', { mode: 'shared' }),
      m.acquire('catalogue', { mode: 'shared' }),
    ]);
    expect(await m.tryAcquire('catalogue')).toBeNull();
    const order: string[] = [];
    const writer = m.withLock('catalogue', () => order.push('writer'), { onHeld: 'wait', waitTimeout: 20_000 });
    await sleep(20);
    const lateReader = m.withLock('catalogue', () => order.push('late reader'), {
      mode: 'shared',
      onHeld: 'wait',
      waitTimeout: 20_000,
    });
    await sleep(20);
    expect(order).toEqual([]);
    await Promise.all(readers.map((r) => r.release()));
    await Promise.all([writer, lateReader]);
    expect(order).toEqual(['writer', 'late reader']);
  });

  test('a plain lock of the same name is the write lock', async () => {
    const { m } = manager();
    const write = await m.acquire('doc');
    expect(await m.tryAcquire('doc', { mode: 'shared' })).toBeNull();
    await write.release();
    const read = await m.tryAcquire('doc', { mode: 'shared' });
    expect(read).not.toBeNull();
    expect(await m.tryAcquire('doc')).toBeNull();
    await read!.release();
  });
});

describe('with several names', () => {
  test('shared readers of overlapping lists hold together; semaphores of several names admit limit holders per name', async () => {
    const { m } = manager();
    expect(await mostAtOnce(m, ['b', 'a'], 4, { mode: 'shared' })).toBe(4);
    expect(await mostAtOnce(m, ['x', 'y'], 6, { limit: 2 })).toBe(2);
  });

  test('a writer of one name keeps out a reader of a list that has it; the reader takes none of the names meanwhile', async () => {
    const { m, memory } = manager();
    const write = await m.acquire('b');
    expect(await m.tryAcquire(['a', 'b'], { mode: 'shared' })).toBeNull();
    expect(memory.isHeld('a')).toBe(false);
    await write.release();
    const read = await m.tryAcquire(['a', 'b'], { mode: 'shared' });
    expect(read!.names).toEqual(['a', 'b']);
    await read!.release();
  });
});
