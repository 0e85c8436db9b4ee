import { TimedList, TimedNode } from '../../lib/shared/timer.js';
import { InMemoryLockProvider, LockManager } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

class Probe extends TimedNode {
  calls: number[] = [];
  constructor(private readonly started: number) {
    super();
  }
  onTimer(): void {
    this.calls.push(performance.now() - this.started);
  }
}

describe('TimedList (the held locks of a manager)', () => {
  test('calls each member back once its time has come, earliest first, and never a removed one', async () => {
    const list = new TimedList();
    const t = performance.now();
    const late = new Probe(t);
    const early = new Probe(t);
    const removed = new Probe(t);
    list.schedule(late, t + 150);
    list.schedule(early, t + 40);
    list.schedule(removed, t + 20);
    expect(list.size).toBe(3);
    list.remove(removed);
    list.remove(removed); // twice is harmless
    expect(list.size).toBe(2);
    await sleep(90);
    expect(early.calls).toHaveLength(1);
    expect(late.calls).toHaveLength(0);
    await sleep(150);
    expect(late.calls).toHaveLength(1);
    expect(early.calls).toHaveLength(1);
    expect(removed.calls).toHaveLength(0);
    expect(late.calls[0]).toBeGreaterThanOrEqual(140);
    // Members stay members after their call, until removed.
    const members = list.members();
    expect(members).toHaveLength(2);
    expect(members.includes(late) && members.includes(early)).toBe(true);
  });

  test('moving a member earlier re-arms; later does not call it early', async () => {
    const list = new TimedList();
    const t = performance.now();
    const a = new Probe(t);
    list.schedule(a, t + 5_000);
    list.schedule(a, t + 30);
    expect(list.size).toBe(1);
    await sleep(120);
    expect(a.calls).toHaveLength(1);
    list.schedule(a, performance.now() + 200);
    await sleep(60);
    expect(a.calls).toHaveLength(1);
    list.remove(a);
    expect(list.members()).toEqual([]);
  });
});

describe('in-memory answers without a promise', () => {
  test('acquire of a free key, extend and release answer synchronously; a queued acquire returns a promise', async () => {
    const p = new InMemoryLockProvider();
    const grant = p.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false });
    expect(grant).toEqual({ fencingToken: expect.any(Number) });
    expect(p.acquire({ key: 'k', owner: 'b', ttl: 1_000, wait: false })).toBeNull();
    expect(p.extend('k', 'a', 2_000)).toBe(true);
    const queued = p.acquire({ key: 'k', owner: 'c', ttl: 1_000, wait: true });
    expect(queued).toBeInstanceOf(Promise);
    expect(p.release('k', 'a')).toBe(true);
    await expect(queued).resolves.toMatchObject({ queued: true });
    expect(p.release('k', 'c')).toBe(true);
  });

  test('releaseAll releases what the manager holds, also locks taken inside withLock', async () => {
    const p = new InMemoryLockProvider();
    const m = new LockManager({ provider: p });
    await m.acquire('one');
    await m.acquire('two');
    let inside!: () => void;
    const running = m.withLock('three', () => new Promise<void>((r) => (inside = r)));
    await sleep(10);
    expect(['one', 'two', 'three'].map((k) => p.isHeld(k))).toEqual([true, true, true]);
    await m.releaseAll();
    expect(['one', 'two', 'three'].map((k) => p.isHeld(k))).toEqual([false, false, false]);
    inside();
    await running;
  });
});

describe('close() during an acquisition in flight', () => {
  test('a try whose answer arrives after close() started is released before close() resolves, so the store can close next', async () => {
    class SlowProvider extends InMemoryLockProvider {
      released: string[] = [];
      async acquire(...args: Parameters<InMemoryLockProvider['acquire']>) {
        await sleep(150);
        return super.acquire(...args);
      }
      release(key: string, owner: string) {
        this.released.push(key);
        return super.release(key, owner);
      }
    }
    const provider = new SlowProvider();
    const errors: string[] = [];
    const m = new LockManager({
      provider,
      logger: { debug() {}, warn() {}, error: (msg: string) => void errors.push(msg) },
    });
    const late = m.tryAcquire('late');
    await sleep(20);
    await m.close();
    // close() waited for the store's answer, and released what it granted, before the store closes.
    expect(provider.released).toEqual(['lock:late']);
    expect(provider.isHeld('late')).toBe(false);
    await provider.close();
    await expect(late).rejects.toThrow(/granted after the lock manager closed/);
    expect(errors).toEqual([]);
    await expect(m.tryAcquire('after')).rejects.toThrow(/after the lock manager closed/);
  });
});
