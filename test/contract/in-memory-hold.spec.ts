import { InMemoryLockProvider, LockError, LockOptionsError } from '../../lib/index.js';

/** The in-memory test helpers for semaphores and read/write locks: hold(name, { mode, permits, limit }) and isHeld. */
describe('InMemoryLockProvider.hold with mode, permits and limit', () => {
  let memory: InMemoryLockProvider;
  const key = (name: string) => `lock:${name}`;
  const take = (name: string, owner: string, o: { mode?: 'shared'; limit?: number } = {}) =>
    memory.acquire({ key: key(name), owner, ttl: 30_000, wait: false, ...o });

  beforeEach(() => {
    memory = new InMemoryLockProvider();
  });
  afterEach(() => memory.close());

  test("mode 'shared' holds as a reader: other readers enter, plain and exclusive callers do not; isHeld until released", async () => {
    const release = await memory.hold('report', { mode: 'shared' });
    expect(memory.isHeld('report')).toBe(true);
    expect(take('report', 'reader', { mode: 'shared' })).not.toBeNull();
    expect(take('report', 'writer')).toBeNull();
    expect(await memory.release(key('report'), 'reader')).toBe(true);
    expect(memory.isHeld('report')).toBe(true);
    await release();
    expect(memory.isHeld('report')).toBe(false);
    expect(take('report', 'writer')).not.toBeNull();
  });

  test('permits with limit take that many permits of the semaphore, leaving the rest; release frees them all', async () => {
    const release = await memory.hold('exports', { permits: 2, limit: 3 });
    expect(take('exports', 'app-1', { limit: 3 })).not.toBeNull();
    expect(take('exports', 'app-2', { limit: 3 })).toBeNull();
    expect(() => take('exports', 'app-2', { limit: 2 })).toThrow(LockOptionsError);
    const page = await memory.inspect({ prefix: key('exports'), limit: 10 });
    expect(page.locks.map((l) => l.permits)).toEqual([3, 3, 3]);
    await release();
    expect(await memory.release(key('exports'), 'app-1')).toBe(true);
    expect(memory.isHeld('exports')).toBe(false);
  });

  test('permits without limit fill a semaphore of that size; permits with shared hold that many readers', async () => {
    const full = await memory.hold('jobs', { permits: 2 });
    expect(take('jobs', 'app', { limit: 2 })).toBeNull();
    await full();
    const readers = await memory.hold('cfg', { mode: 'shared', permits: 3 });
    expect((await memory.inspect({ prefix: key('cfg'), limit: 10 })).locks.map((l) => l.mode)).toEqual([
      'shared',
      'shared',
      'shared',
    ]);
    await readers();
    expect(memory.isHeld('cfg')).toBe(false);
  });

  test('a hold that cannot enter throws LockError and keeps nothing; bad options throw LockOptionsError', async () => {
    expect(take('jobs', 'app', { limit: 2 })).not.toBeNull();
    await expect(memory.hold('jobs', { permits: 2, limit: 2 })).rejects.toThrow(LockError);
    expect((await memory.inspect({ prefix: key('jobs'), limit: 10 })).locks.map((l) => l.owner)).toEqual(['app']);
    await expect(memory.hold('jobs', { mode: 'shared', limit: 2 })).rejects.toThrow(LockOptionsError);
    await expect(memory.hold('jobs', { permits: 3, limit: 2 })).rejects.toThrow(LockOptionsError);
    await expect(memory.hold('jobs', { permits: 0 })).rejects.toThrow(/permits must be an integer >= 1, got 0/);
    await expect(memory.hold('jobs', 2 ** 31)).rejects.toThrow(/ttl must be .* at most 2147483647 .*, got 2147483648/);
  });
});
