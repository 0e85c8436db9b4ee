/**
 * What a holder sees after its process did not run past its lease (a blocked
 * event loop here; a stopped process in the conformance suite): `held`,
 * `signal` (also a signal object read before the pause) and `currentLock()`
 * answer from the lease clock on the first synchronous read, before any timer
 * could run, and the lease counts as over a drift margin before its end (see
 * docs/guarantees.md, "Clocks"). On the in-memory store through LockManager.
 */
import {
  InMemoryLockProvider,
  LockLostError,
  LockManager,
  currentLock,
  type LockEvent,
  type LockHandle,
  type LockManagerOptions,
} from '../../lib/index.js';
import { FakeLockProvider } from '../support/fake-lock-provider.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { sleep } from '../support/sleep.js';

/** Keeps the event loop from running for `ms` (as a long synchronous task, a GC pause or SIGSTOP would). */
function block(ms: number): void {
  blockUntil(performance.now() + ms);
}

function blockUntil(t: number): void {
  while (performance.now() < t);
}

/** The drift margin of a lease of `ms` (docs/guarantees.md): 1 % of it plus 2 ms. */
const drift = (ms: number): number => ms * 0.01 + 2;

const managers: LockManager[] = [];
function manager(options: Partial<LockManagerOptions> = {}) {
  const events: LockEvent[] = [];
  const logger = new RecordingLogger();
  const m = new LockManager({
    provider: new InMemoryLockProvider(),
    onEvent: (e) => events.push(e),
    logger,
    ...options,
  });
  managers.push(m);
  return { m, events, logger, provider: m.provider };
}
afterEach(async () => {
  for (const m of managers.splice(0)) await m.close();
});

const NOT_RUNNING = /ran out while this process was not running .*: it ran again \d+ ms after the end of the lease/;

/** What a first read tells about a handle, when it is the first thing read after the pause. */
const firstReads: Array<[string, (h: LockHandle, early: AbortSignal) => boolean]> = [
  ['held', (h) => h.held],
  ['signal.aborted of the signal read before the pause', (_h, early) => !early.aborted],
  ['signal.reason of the signal read before the pause', (_h, early) => !(early.reason instanceof LockLostError)],
  [
    'signal.throwIfAborted() of the signal read before the pause',
    (_h, early) => {
      try {
        early.throwIfAborted();
        return true;
      } catch (err) {
        if (!(err instanceof LockLostError)) throw err;
        return false;
      }
    },
  ],
  ['signal.aborted of the handle', (h) => !h.signal.aborted],
];

describe.each([
  ['renew: false', false],
  ['renew: true', true],
])('a holder whose event loop was blocked past its lease (%s)', (_label, renew) => {
  test.each(firstReads)(
    'the first synchronous read after the pause, %s, says it is not held',
    async (_read, stillHeld) => {
      const { m: a, events, logger, provider } = manager();
      const b = new LockManager({ provider });
      managers.push(b);
      const h = await a.acquire('x', { ttl: 300, renew });
      const early = h.signal;
      expect(early.aborted).toBe(false);
      block(700);
      expect(stillHeld(h, early)).toBe(false);
      // Everything else agrees at once, before any timer ran.
      expect(h.held).toBe(false);
      expect(h.signal).toBe(early);
      expect(early.aborted).toBe(true);
      expect(early.reason).toBeInstanceOf(LockLostError);
      expect(() => early.throwIfAborted()).toThrow(LockLostError);
      expect(String((early.reason as Error).message)).toMatch(NOT_RUNNING);
      expect(String((early.reason as Error).message)).toContain('Lock "x" was lost');
      const lost = events.filter((e) => e.type === 'lost');
      expect(lost).toHaveLength(1);
      expect(logger.lines('warn', 'Lock "x" was lost')).toHaveLength(1);
      const other = await b.tryAcquire('x');
      expect(other).not.toBeNull();
      expect(other!.fencingToken).toBeGreaterThan(h.fencingToken);
      // Lost, not released: release answers false and touches nothing; extend throws the loss; the timer reports nothing more.
      expect(await h.release()).toBe(false);
      await expect(h.extend()).rejects.toBe(early.reason);
      await sleep(50);
      expect(events.filter((e) => e.type === 'lost')).toHaveLength(1);
      expect(events.some((e) => e.type === 'released' && e.name === 'x' && e.fencingToken === h.fencingToken)).toBe(
        false,
      );
      expect(other!.held).toBe(true);
      await other!.release();
    },
  );

  test('currentLock() in a locked call tells the truth at once after the pause', async () => {
    const { m, events } = manager();
    const seen = await m.withLock(
      'y',
      async () => {
        const signal = currentLock()!.signal;
        block(700);
        const lock = currentLock('y')!;
        return { aborted: signal.aborted, held: lock.held, lost: events.filter((e) => e.type === 'lost').length };
      },
      { ttl: 300, renew },
    );
    expect(seen).toEqual({ aborted: true, held: false, lost: 1 });
  });
});

describe('the drift margin', () => {
  test('a lease counts as over 1 % of it plus 2 ms before its end; the lost event comes then, with held already false', async () => {
    const { m, events } = manager();
    const t0 = performance.now();
    const h = await m.acquire('margin', { ttl: 1_000, renew: false });
    const t1 = performance.now();
    blockUntil(t0 + 500);
    expect(h.held).toBe(true);
    // The lease started between t0 and t1 (taken before the call): past t1 + ttl - margin it is not held, whatever the store says.
    blockUntil(t1 + 1_000 - drift(1_000) + 0.5);
    expect(h.held).toBe(false);
    expect(events.filter((e) => e.type === 'lost')).toHaveLength(1);

    let heldAtEvent: boolean | undefined;
    let lostAt = 0;
    const s0 = performance.now();
    const timed = await m.acquire('timed', { ttl: 300, renew: false });
    const lost = new Promise<void>((resolve) =>
      m.subscribe((e) => {
        if (e.type !== 'lost' || e.name !== 'timed') return;
        heldAtEvent = timed.held;
        lostAt = performance.now();
        resolve();
      }),
    );
    await lost;
    expect(heldAtEvent).toBe(false);
    expect(lostAt).toBeGreaterThanOrEqual(s0 + 300 - drift(300));
    expect(timed.signal.reason.message).toContain('renew is off');
  });

  test("the LockLostError's figure counts from the lease's end itself, not from the margin before it", async () => {
    const { m } = manager();
    const t0 = performance.now();
    const h = await m.acquire('late', { ttl: 3_000, renew: false });
    const t1 = performance.now();
    // The lease ended between t0 + ttl and t1 + ttl; the read comes 40 ms after the latest of those.
    blockUntil(t1 + 3_000 + 40);
    const r0 = performance.now();
    expect(h.held).toBe(false);
    const r1 = performance.now();
    const late = Number(/it ran again (\d+) ms after the end of the lease/.exec(h.signal.reason.message)?.[1]);
    // Measured from heldUntil (the end less its 32 ms margin) it would say about 72 ms.
    expect(late).toBeGreaterThanOrEqual(Math.floor(r0 - t1 - 3_000));
    expect(late).toBeLessThanOrEqual(Math.ceil(r1 - t0 - 3_000));
  });

  test('extend: the new lease counts from before the call, less its margin', async () => {
    class SlowExtend extends InMemoryLockProvider {
      async extend(key: string, owner: string, ttl: number): Promise<boolean> {
        await sleep(200);
        return super.extend(key, owner, ttl);
      }
    }
    const { m } = manager({ provider: new SlowExtend() });
    const h = await m.acquire('ext', { ttl: 300, renew: false });
    const before = performance.now();
    await h.extend(1_000);
    blockUntil(before + 1_000 - drift(1_000) + 0.5);
    expect(h.held).toBe(false);
  });

  test('a renewal in flight when the pause ends does not bring a lost lock back', async () => {
    let answer: ((ok: boolean) => void) | undefined;
    class HangingExtend extends InMemoryLockProvider {
      extend(): Promise<boolean> {
        return new Promise((resolve) => (answer = resolve));
      }
    }
    const { m, events } = manager({ provider: new HangingExtend() });
    const h = await m.acquire('renewing', { ttl: 300 });
    for (let i = 0; i < 400 && !answer; i++) await sleep(5); // the renewal at a third of the ttl goes out
    expect(answer).toBeDefined();
    block(400);
    expect(h.held).toBe(false);
    answer!(true);
    await sleep(20);
    expect(h.held).toBe(false);
    expect(events.filter((e) => e.type === 'lost')).toHaveLength(1);
    expect(events.some((e) => e.type === 'extended')).toBe(false);
  });

  test('holdAtLeast: a lock that ran out asks the store to keep the key for the rest of the minimum (owner-checked), not to free it', async () => {
    const calls: string[] = [];
    class Recording extends InMemoryLockProvider {
      extend(key: string, owner: string, ttl: number) {
        calls.push(`extend ${ttl <= 10_000 ? 'rest' : ttl}`);
        return super.extend(key, owner, ttl);
      }
      release(key: string, owner: string) {
        calls.push('release');
        return super.release(key, owner);
      }
    }
    const { m } = manager({ provider: new Recording() });
    const h = await m.acquire('tick', { ttl: 300, renew: false, holdAtLeast: 10_000 });
    block(400);
    expect(await h.release()).toBe(false);
    expect(calls).toEqual(['extend rest']);
  });

  test('a multi-name lock: held and its signal (read before the pause) tell the truth at once', async () => {
    const { m } = manager();
    const h = await m.acquire(['p', 'q'], { ttl: 300, renew: false });
    const early = h.signal;
    block(700);
    expect(early.aborted).toBe(true);
    expect(String((early.reason as Error).message)).toMatch(NOT_RUNNING);
    expect(h.held).toBe(false);
    expect(await h.release()).toBe(false);
  });
});

describe('a local hand-off', () => {
  test('passes on the lease with its margin: the next holder is held no longer than the first would have been', async () => {
    const store = new FakeLockProvider();
    const m = new LockManager({ provider: store });
    managers.push(m);
    const first = await m.acquire('handed');
    const waiting = m.acquire('handed', { ttl: 10_000, renew: false }); // queues at the store
    const next = m.acquire('handed', { ttl: 30_000 }); // waits in the process behind it, before its grant
    await first.release();
    const taken = await waiting;
    await sleep(300);
    await taken.release();
    const second = await next;
    expect(second.fencingToken).toBe(taken.fencingToken + 1); // handed over in the process
    // The store's lease is the one `taken` got 300 ms earlier: its margin is 1 % of the whole lease, not of what is left.
    const heldUntil = (lock: LockHandle): number => (lock as unknown as { heldUntil: number }).heldUntil;
    expect(heldUntil(second)).toBeLessThanOrEqual(heldUntil(taken));
    await second.release();
  });
});
