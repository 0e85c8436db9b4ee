import { jest } from '@jest/globals';
import {
  InMemoryLockProvider,
  LockAcquireError,
  LockLostError,
  LockManager,
  LockOptionsError,
  LockReentryError,
  LockStoreError,
  LockProvider,
  currentLock,
  type LockEvent,
  type LockAcquireRequest,
} from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

function manager(opts: Partial<ConstructorParameters<typeof LockManager>[0]> = {}) {
  const provider = (opts.provider as InMemoryLockProvider) ?? new InMemoryLockProvider();
  const events: LockEvent[] = [];
  const m = new LockManager({ provider, onEvent: (e) => events.push(e), ...opts });
  return { m, provider, events };
}

/** A store whose every call fails, like a Redis that is down. */
class DownProvider extends LockProvider {
  readonly kind = 'down';
  calls = 0;
  async acquire(_r: LockAcquireRequest): Promise<null> {
    this.calls++;
    throw new LockStoreError('acquire', 'connection refused');
  }
  async extend(): Promise<boolean> {
    throw new LockStoreError('extend', 'connection refused');
  }
  async release(): Promise<boolean> {
    throw new LockStoreError('release', 'connection refused');
  }
  async ping(): Promise<number> {
    throw new LockStoreError('ping', 'connection refused');
  }
  async close() {}
}

describe('LockManager.withLock', () => {
  test('returns the result, and releases on success', async () => {
    const { m, provider } = manager();
    expect(await m.withLock('a', () => 42)).toBe(42);
    expect(provider.isHeld('a')).toBe(false);
  });

  test('passes the error through unchanged, and releases on throw and on rejection', async () => {
    const { m, provider } = manager();
    const boom = new Error('boom');
    await expect(
      m.withLock('a', () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(provider.isHeld('a')).toBe(false);
    await expect(
      m.withLock('a', async () => {
        await sleep(1);
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(provider.isHeld('a')).toBe(false);
  });

  test('holds the lock while fn runs, under the key prefix', async () => {
    const { m, provider } = manager({ keyPrefix: 'app:' });
    await m.withLock('a', async () => {
      expect(provider.isHeld('a')).toBe(true);
    });
    expect(provider.isHeld('a')).toBe(false);
  });

  test("onHeld 'throw' (default) throws LockAcquireError naming the lock, without running fn", async () => {
    const { m, provider } = manager();
    const release = await provider.hold('payouts');
    const fn = jest.fn();
    const err = (await m.withLock('payouts', fn).catch((e: unknown) => e)) as LockAcquireError;
    expect(err).toBeInstanceOf(LockAcquireError);
    expect(err.lockName).toBe('payouts');
    expect(err.reason).toBe('held');
    expect(err.message).toContain('"payouts"');
    expect(fn).not.toHaveBeenCalled();
    await release();
  });

  test("onHeld 'skip' returns undefined without running fn", async () => {
    const { m, provider, events } = manager();
    const release = await provider.hold('a');
    const fn = jest.fn();
    expect(await m.withLock('a', fn, { onHeld: 'skip' })).toBeUndefined();
    expect(fn).not.toHaveBeenCalled();
    expect(events.map((e) => e.type)).toEqual(['answered', 'contended', 'skipped']);
    await release();
  });

  test('subscribe() adds a listener at run time; the function it returns removes it; a throwing listener does not stop the others', async () => {
    const { m, events } = manager();
    const extra: string[] = [];
    const throwing = m.subscribe(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = m.subscribe((e) => extra.push(e.type));
    await m.withLock('s', () => undefined, { label: 'S' });
    expect(extra).toEqual(['acquired', 'answered', 'released']);
    expect(events.filter((e) => e.type === 'answered')).toEqual([
      expect.objectContaining({
        name: 's',
        label: 'S',
        wait: false,
        outcome: 'acquired',
        queued: false,
        fencingToken: expect.any(Number),
      }),
    ]);
    unsubscribe();
    throwing();
    await m.withLock('s', () => undefined);
    expect(extra).toHaveLength(3);
    expect(events.filter((e) => e.type === 'answered')).toHaveLength(2);
  });

  test("onHeld 'wait' waits in FIFO order and runs each caller once", async () => {
    const { m } = manager();
    const order: number[] = [];
    let inside = 0;
    await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => {
        await sleep(i * 20);
        await m.withLock(
          'q',
          async () => {
            inside++;
            expect(inside).toBe(1);
            order.push(i);
            await sleep(30);
            inside--;
          },
          { onHeld: 'wait' },
        );
      }),
    );
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  test("onHeld 'wait' with waitTimeout throws LockAcquireError('timeout')", async () => {
    const { m, provider, events } = manager();
    const release = await provider.hold('a');
    const started = Date.now();
    const err = (await m
      .withLock('a', () => 1, { onHeld: 'wait', waitTimeout: 200 })
      .catch((e: unknown) => e)) as LockAcquireError;
    expect(err).toBeInstanceOf(LockAcquireError);
    expect(err.reason).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(events.some((e) => e.type === 'timeout')).toBe(true);
    await release();
  });

  test('an aborted signal ends a wait with the signal reason', async () => {
    const { m, provider } = manager();
    const release = await provider.hold('a');
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('client went away')), 50);
    await expect(m.withLock('a', () => 1, { onHeld: 'wait', signal: ac.signal })).rejects.toThrow('client went away');
    await release();
  });

  test('two different names never block each other', async () => {
    const { m } = manager();
    await m.withLock('a', async () => {
      expect(await m.withLock('b', () => 'inner')).toBe('inner');
    });
  });

  test('nesting the same name fails at once with LockReentryError, not a stall', async () => {
    const { m } = manager();
    const started = Date.now();
    const err = (await m
      .withLock('a', () => m.withLock('a', () => 1, { onHeld: 'wait' }))
      .catch((e: unknown) => e)) as LockReentryError;
    expect(err).toBeInstanceOf(LockReentryError);
    expect(err.message).toContain('reentrant: true');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test('reentrant: true runs the inner call under the outer lock, and the outer release still frees it', async () => {
    const { m, provider } = manager();
    const result = await m.withLock('a', async (outer) => {
      const inner = await m.withLock('a', (h) => h, { reentrant: true });
      expect(inner).toBe(outer);
      expect(provider.isHeld('a')).toBe(true);
      return 'ok';
    });
    expect(result).toBe('ok');
    expect(provider.isHeld('a')).toBe(false);
  });

  test('sibling calls outside a lock are not mistaken for nesting', async () => {
    const { m } = manager();
    const results = await Promise.all([
      m.withLock('s', () => 1, { onHeld: 'wait' }),
      m.withLock('s', () => 2, { onHeld: 'wait' }),
    ]);
    expect(results).toEqual([1, 2]);
  });

  test('the current handle is reachable in the call chain, and undefined outside', async () => {
    const { m } = manager();
    expect(currentLock()).toBeUndefined();
    await m.withLock('outer', async (outer) => {
      await sleep(1);
      expect(currentLock()).toBe(outer);
      expect(m.current('outer')).toBe(outer);
      await m.withLock('inner', async (inner) => {
        expect(currentLock()).toBe(inner);
        expect(currentLock('outer')).toBe(outer);
        expect(m.current()).toBe(inner);
      });
      expect(currentLock()).toBe(outer);
    });
    expect(currentLock()).toBeUndefined();
  });

  test('a store failure is a LockStoreError, never LockAcquireError', async () => {
    const { m, events } = manager({ provider: new DownProvider() });
    const err = await m.withLock('a', () => 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockStoreError);
    expect(err).not.toBeInstanceOf(LockAcquireError);
    expect(events.some((e) => e.type === 'store-error')).toBe(true);
  });

  test('a provider that throws a plain error is wrapped in LockStoreError with the cause', async () => {
    class Broken extends DownProvider {
      async acquire(): Promise<null> {
        throw new TypeError('socket closed');
      }
    }
    const err = (await manager({ provider: new Broken() })
      .m.withLock('a', () => 1)
      .catch((e: unknown) => e)) as LockStoreError;
    expect(err).toBeInstanceOf(LockStoreError);
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(err.lockName).toBe('a');
  });
});

describe('handles: acquire, tryAcquire, fencing, release', () => {
  test('tryAcquire returns null at once when held, a handle when free', async () => {
    const { m } = manager();
    const h = await m.tryAcquire('a');
    expect(h).not.toBeNull();
    expect(h!.name).toBe('a');
    expect(h!.key).toBe('lock:a');
    expect(h!.held).toBe(true);
    expect(await m.tryAcquire('a')).toBeNull();
    expect(await h!.release()).toBe(true);
    expect(await h!.release()).toBe(false); // twice is harmless
    expect(h!.held).toBe(false);
    const again = await m.tryAcquire('a');
    expect(again!.fencingToken).toBeGreaterThan(h!.fencingToken);
    await again!.release();
  });

  test("tryAcquire does not wait when the manager's default onHeld is 'wait' (one name or several)", async () => {
    const { m, provider } = manager({ onHeld: 'wait' });
    const release = await provider.hold('a');
    const answer = (p: Promise<unknown>) => Promise.race([p, sleep(2_000).then(() => 'still waiting')]);
    expect(await answer(m.tryAcquire('a'))).toBeNull();
    expect(await answer(m.tryAcquire(['a', 'b']))).toBeNull();
    expect(provider.isHeld('b')).toBe(false);
    await release();
  });

  test('acquire waits for release; with waitTimeout it throws LockAcquireError', async () => {
    const { m } = manager();
    const first = await m.acquire('a');
    await expect(m.acquire('a', { waitTimeout: 100 })).rejects.toBeInstanceOf(LockAcquireError);
    const second = m.acquire('a');
    setTimeout(() => void first.release(), 50);
    const h = await second;
    expect(h.fencingToken).toBeGreaterThan(first.fencingToken);
    await h.release();
  });

  test('extend(ms) keeps the lock; extending after release throws LockLostError', async () => {
    const { m, provider } = manager();
    const h = await m.acquire('a', { ttl: 200, renew: false });
    await h.extend(5_000);
    await sleep(400);
    expect(provider.isHeld('a')).toBe(true);
    await h.release();
    await expect(h.extend(1_000)).rejects.toBeInstanceOf(LockLostError);
  });

  test('close() releases every held lock and refuses new ones', async () => {
    const { m, provider } = manager();
    await m.acquire('a');
    await m.acquire('b');
    await m.close();
    expect(provider.isHeld('a')).toBe(false);
    expect(provider.isHeld('b')).toBe(false);
    await expect(m.acquire('c')).rejects.toThrow(/closed/);
  });

  test('events: acquired with wait time, released with hold time', async () => {
    const { m, events } = manager();
    await m.withLock('a', () => sleep(20));
    const acquired = events.find((e) => e.type === 'acquired');
    const released = events.find((e) => e.type === 'released');
    expect(acquired).toMatchObject({ name: 'a', type: 'acquired' });
    expect(released).toMatchObject({ name: 'a', type: 'released' });
    expect((released as { heldMs: number }).heldMs).toBeGreaterThanOrEqual(15);
  });

  test('an onEvent that throws does not break locking', async () => {
    const m = new LockManager({
      provider: new InMemoryLockProvider(),
      onEvent: () => {
        throw new Error('metrics down');
      },
    });
    expect(await m.withLock('a', () => 7)).toBe(7);
  });
});

describe('leases', () => {
  test('renewal keeps the lock alive past its ttl while the holder runs', async () => {
    const { m, provider, events } = manager();
    await m.withLock(
      'long',
      async (lock) => {
        await sleep(2_000);
        expect(lock.held).toBe(true);
        expect(lock.signal.aborted).toBe(false);
        expect(provider.isHeld('long')).toBe(true);
      },
      { ttl: 600 },
    );
    expect(events.filter((e) => e.type === 'extended').length).toBeGreaterThanOrEqual(2);
  });

  test('renew: false lets the lease end: the signal aborts with LockLostError and another caller gets in', async () => {
    const { m } = manager();
    await m.withLock(
      'short',
      async (lock) => {
        await sleep(700);
        expect(lock.signal.aborted).toBe(true);
        expect(lock.signal.reason).toBeInstanceOf(LockLostError);
        expect(lock.held).toBe(false);
        const other = await m.tryAcquire('short');
        expect(other).not.toBeNull();
        await other!.release();
      },
      { ttl: 200, renew: false },
    );
  });

  test('a lock taken over after expiry is not released by the old holder', async () => {
    const { m, provider } = manager();
    const old = await m.acquire('x', { ttl: 150, renew: false });
    await sleep(400);
    const next = await m.acquire('x');
    expect(await old.release()).toBe(false);
    expect(provider.isHeld('x')).toBe(true);
    await next.release();
  });

  test('a renewal that finds another owner aborts the signal', async () => {
    const { m, provider, events } = manager();
    const h = await m.acquire('y', { ttl: 300 });
    await provider.release('lock:y', (h as unknown as { owner: string }).owner); // someone deleted our key
    const other = await m.acquire('y');
    await sleep(400);
    expect(h.signal.aborted).toBe(true);
    expect(h.signal.reason).toBeInstanceOf(LockLostError);
    expect(events.some((e) => e.type === 'lost' && e.name === 'y')).toBe(true);
    await other.release();
    await h.release();
  });

  test('maxHold caps renewal: the lock expires and the signal aborts', async () => {
    const { m } = manager();
    const h = await m.acquire('capped', { ttl: 600, maxHold: 1_200 });
    await sleep(800);
    expect(h.held).toBe(true);
    await sleep(1_600);
    expect(h.signal.aborted).toBe(true);
    expect(String(h.signal.reason.message)).toContain('maxHold');
    await h.release();
  });

  test('holdAtLeast keeps the lock after a fast section, then frees it', async () => {
    const { m, provider } = manager();
    await m.withLock('tick', () => 1, { holdAtLeast: 400 });
    expect(provider.isHeld('tick')).toBe(true);
    expect(await m.tryAcquire('tick')).toBeNull();
    await sleep(700);
    expect(provider.isHeld('tick')).toBe(false);
  });

  test('holdAtLeast does not extend a section that already ran longer', async () => {
    const { m, provider } = manager();
    await m.withLock('slow', () => sleep(150), { holdAtLeast: 50 });
    expect(provider.isHeld('slow')).toBe(false);
  });

  test('renewal through a failing store aborts the signal once the lease ends', async () => {
    class FlakyProvider extends InMemoryLockProvider {
      down = false;
      async extend(key: string, owner: string, ttl: number) {
        if (this.down) throw new LockStoreError('extend', 'timeout');
        return super.extend(key, owner, ttl);
      }
    }
    const provider = new FlakyProvider();
    const { m } = manager({ provider });
    const h = await m.acquire('f', { ttl: 300 });
    provider.down = true;
    await sleep(800);
    expect(h.signal.aborted).toBe(true);
    expect(String(h.signal.reason.message)).toMatch(/could not reach the store|lease ended/);
    provider.down = false;
    await h.release();
  });
});

describe('bad input', () => {
  const { m } = manager();
  test.each([
    ['an empty name', () => m.withLock('', () => 1)],
    ['a number name', () => m.withLock(5 as unknown as string, () => 1)],
    ['a negative ttl', () => m.withLock('a', () => 1, { ttl: -1 })],
    ['a zero ttl', () => m.withLock('a', () => 1, { ttl: 0 })],
    ['an infinite ttl', () => m.withLock('a', () => 1, { ttl: Infinity })],
    ['a NaN waitTimeout', () => m.withLock('a', () => 1, { waitTimeout: NaN })],
    ['a negative waitTimeout', () => m.acquire('a', { waitTimeout: -5 })],
    ['an unknown onHeld', () => m.withLock('a', () => 1, { onHeld: 'retry' as 'wait' })],
    ['an unknown option', () => m.withLock('a', () => 1, { tll: 5 } as object)],
    ['fn that is not a function', () => m.withLock('a', 5 as unknown as () => 1)],
    ['a name for tryAcquire that is not a string', () => m.tryAcquire(null as unknown as string)],
  ])('%s raises LockOptionsError and runs nothing', async (_label, call) => {
    const err = await (call as () => Promise<unknown>)().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockOptionsError);
  });

  test('module options of the wrong type raise LockOptionsError naming the option', () => {
    const p = new InMemoryLockProvider();
    expect(() => new LockManager({ provider: p, ttl: '30s' as unknown as number })).toThrow(/ttl/);
    expect(() => new LockManager({ provider: p, keyPrefix: 1 as unknown as string })).toThrow(/keyPrefix/);
    expect(() => new LockManager({ provider: p, onHeld: 'never' as 'wait' })).toThrow(/onHeld/);
    expect(() => new LockManager({ provider: p, onEvent: 'x' as unknown as () => void })).toThrow(/onEvent/);
  });
});
