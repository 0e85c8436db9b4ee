/**
 * The conformance cases of names and durations (issue 31, item 5), run for
 * every store by describeLockProviderConformance: each kind of bad value is a
 * LockOptionsError naming the option, the value and the allowed range, before
 * any store call; the largest allowed values work on the store.
 */
import { randomBytes } from 'node:crypto';
import { LockManager, LockOptionsError, MAX_DURATION_MS, MAX_KEY_PREFIX_LENGTH, MAX_LOCK_NAME_LENGTH, type LockProvider } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

/** The store methods a lock call may reach. */
const STORE_CALLS = ['acquire', 'acquireMany', 'extend', 'extendMany', 'release', 'releaseMany', 'holder'] as const;

/** `MAX_LOCK_NAME_LENGTH` UTF-16 code units of 3- and 4-byte UTF-8 characters: the most bytes a name can have. */
const longestName = (tag: string): string => {
  const name = `${tag}:😀🔒` + '€'.repeat(MAX_LOCK_NAME_LENGTH);
  return name.slice(0, MAX_LOCK_NAME_LENGTH);
};

export function describeInputLimitsConformance(provider: () => LockProvider): void {
  describe('names and durations: one rule on every store (LockOptionsError before any store call)', () => {
    let p: LockProvider;
    let locks: LockManager;
    let prefix: string;
    let calls: string[];
    let restore: (() => void)[];

    beforeEach(() => {
      p = provider();
      prefix = `limits:${randomBytes(6).toString('hex')}:`;
      calls = [];
      restore = [];
      for (const method of STORE_CALLS) {
        const original = (p as unknown as Record<string, unknown>)[method];
        if (typeof original !== 'function') continue;
        const own = Object.prototype.hasOwnProperty.call(p, method);
        (p as unknown as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
          calls.push(method);
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        };
        restore.push(() => {
          if (own) (p as unknown as Record<string, unknown>)[method] = original;
          else delete (p as unknown as Record<string, unknown>)[method];
        });
      }
      locks = new LockManager({ provider: p, keyPrefix: prefix });
    });
    afterEach(async () => {
      for (const r of restore) r();
      await locks.releaseAll();
    });

    /** Runs `call`, expects a LockOptionsError whose message matches every pattern, and no store call. */
    const refused = async (call: () => unknown, ...patterns: RegExp[]): Promise<void> => {
      let error: unknown;
      try {
        await call();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LockOptionsError);
      for (const pattern of patterns) expect((error as Error).message).toMatch(pattern);
      expect(calls).toEqual([]);
    };

    const range = /at most 2147483647 \(2\^31 − 1 ms, about 24\.8 days\)/;
    const tooLong = [2 ** 31, 1e20, Infinity, NaN];

    test.each(['ttl', 'waitTimeout', 'maxHold', 'holdAtLeast'])('%s over 2^31 − 1 ms (or not finite) is refused at the call', async (option) => {
      for (const value of tooLong) {
        const shown = new RegExp(`${option} must be .*, got ${String(value).replace('+', '\\+')}\\.`);
        await refused(() => locks.withLock('n', () => 1, { onHeld: 'wait', [option]: value }), /^withLock\("n"\): /, shown, range);
        await refused(() => locks.acquire('n', { [option]: value }), shown, range);
        if (option !== 'waitTimeout') await refused(() => locks.tryAcquire(['a', 'b'], { [option]: value }), shown, range);
      }
    });

    test('extend(ms) over 2^31 − 1 ms is refused before the store is asked; the lock stays held', async () => {
      const lock = await locks.acquire('n');
      calls = [];
      for (const value of tooLong) await refused(() => lock.extend(value), /extend\(ms\) of lock "n": ms must be/, range);
      expect(lock.held).toBe(true);
      await lock.release();
    });

    test('a name over MAX_LOCK_NAME_LENGTH code units (1 MB too) is refused, with its length', async () => {
      for (const name of ['x'.repeat(MAX_LOCK_NAME_LENGTH + 1), '€'.repeat(MAX_LOCK_NAME_LENGTH + 1), 'x'.repeat(1 << 20)]) {
        const pattern = new RegExp(`a lock name must be at most ${MAX_LOCK_NAME_LENGTH} characters \\(UTF-16 code units.*\\(${name.length} characters\\)`);
        await refused(() => locks.withLock(name, () => 1), /^withLock\(\)/, pattern);
        await refused(() => locks.tryAcquire(name), pattern);
        await refused(() => locks.acquire(['ok', name]), /names\[1\]/, pattern);
      }
    });

    test.each([
      ['NUL', 'a\u0000b', 'a control character U+0000 at index 1'],
      ['a newline', 'a\nb', 'a control character U+000A at index 1'],
      ['DEL', 'ab\u007f', 'a control character U+007F at index 2'],
      ['a C1 control', '\u0085ab', 'a control character U+0085 at index 0'],
      ['a lone high surrogate', 'ab\ud83d', 'a lone surrogate U+D83D at index 2'],
      ['a lone low surrogate', 'a\ude00b', 'a lone surrogate U+DE00 at index 1'],
      ['a reversed pair', 'a\ude00\ud83db', 'a lone surrogate U+DE00 at index 1'],
    ])('a name with %s is refused, naming the character and the rule', async (_kind, name, found) => {
      const pattern = new RegExp(`the lock name .* holds ${found.replace('+', '\\+')}; a lock name may hold any Unicode text except control characters`);
      await refused(() => locks.withLock(name, () => 1), pattern);
      await refused(() => locks.tryAcquire([name, 'ok']), pattern);
      await refused(() => locks.acquire(name), pattern);
    });

    test('keyPrefix: over MAX_KEY_PREFIX_LENGTH code units, or with a control character, is refused when the manager is made', () => {
      expect(() => new LockManager({ provider: p, keyPrefix: 'p'.repeat(MAX_KEY_PREFIX_LENGTH + 1) })).toThrow(
        new RegExp(`a keyPrefix must be at most ${MAX_KEY_PREFIX_LENGTH} characters`),
      );
      expect(() => new LockManager({ provider: p, keyPrefix: 'app\u0000' })).toThrow(/the keyPrefix "app\\u0000" holds a control character U\+0000/);
      expect(() => new LockManager({ provider: p, ttl: 2 ** 31 })).toThrow(/LockModule options: ttl must be .* at most 2147483647/);
      expect(() => new LockManager({ provider: p, waitTimeout: 1e20 })).toThrow(/waitTimeout must be .*, got 100000000000000000000\./);
      expect(calls).toEqual([]);
    });

    test('the longest name (non-ASCII, surrogate pairs) under the longest non-ASCII prefix works, and is one lock', async () => {
      const longPrefix = `${prefix}${'ß€'.repeat(MAX_KEY_PREFIX_LENGTH)}`.slice(0, MAX_KEY_PREFIX_LENGTH);
      const manager = new LockManager({ provider: p, keyPrefix: longPrefix });
      const name = longestName('a');
      expect(name.length).toBe(MAX_LOCK_NAME_LENGTH);
      expect(Buffer.byteLength(longPrefix + name)).toBeGreaterThan(1_800);
      const lock = await manager.acquire(name);
      expect(await manager.tryAcquire(name)).toBeNull();
      expect(await manager.tryAcquire(longestName('b'))).not.toBeNull();
      await lock.extend(5_000);
      await lock.release();
      const again = await manager.tryAcquire(name);
      expect(again).not.toBeNull();
      await manager.releaseAll();
    });

    test('the longest ttl is taken by the store as given (Redis PX, PostgreSQL interval), and so is extend(MAX_DURATION_MS)', async () => {
      const lock = await locks.acquire('longest-ttl', { ttl: MAX_DURATION_MS, renew: false, maxHold: MAX_DURATION_MS });
      const holder = await p.holder!(prefix + 'longest-ttl');
      expect(holder!.remainingMs).toBeGreaterThan(MAX_DURATION_MS - 60_000);
      expect(holder!.remainingMs).toBeLessThanOrEqual(MAX_DURATION_MS);
      await lock.extend(1_000);
      expect((await p.holder!(prefix + 'longest-ttl'))!.remainingMs).toBeLessThanOrEqual(1_000);
      await lock.extend(MAX_DURATION_MS);
      expect((await p.holder!(prefix + 'longest-ttl'))!.remainingMs).toBeGreaterThan(MAX_DURATION_MS - 60_000);
      expect(await locks.tryAcquire('longest-ttl')).toBeNull();
      await lock.release();
      expect(await p.holder!(prefix + 'longest-ttl')).toBeNull();
    });

    test('the store itself takes the longest ttl and waitTimeout: a waiter waits until release', async () => {
      const key = `${prefix}store-wait`;
      expect(await p.acquire({ key, owner: 'holder', ttl: MAX_DURATION_MS, wait: false })).not.toBeNull();
      let settled = false;
      const waiting = Promise.resolve(p.acquire({ key, owner: 'waiter', ttl: MAX_DURATION_MS, wait: true, waitTimeout: MAX_DURATION_MS })).finally(
        () => (settled = true),
      );
      await sleep(600);
      expect(settled).toBe(false);
      expect(await p.release(key, 'holder')).toBe(true);
      expect(await waiting).not.toBeNull();
      expect(await p.extend(key, 'waiter', MAX_DURATION_MS)).toBe(true);
      expect(await p.release(key, 'waiter')).toBe(true);
    });

    test('the longest waitTimeout waits (no 1 ms time-out, no TimeoutOverflowWarning) until the holder releases', async () => {
      const warnings: Error[] = [];
      const onWarning = (w: Error) => warnings.push(w);
      process.on('warning', onWarning);
      try {
        const holder = await locks.acquire('long-wait');
        const other = new LockManager({ provider: p, keyPrefix: prefix });
        let settled = false;
        const waiting = other.acquire('long-wait', { waitTimeout: MAX_DURATION_MS }).finally(() => (settled = true));
        const viaWithLock = other.withLock('long-wait', () => 'ran', { onHeld: 'wait', waitTimeout: MAX_DURATION_MS });
        await sleep(600);
        expect(settled).toBe(false);
        await holder.release();
        const lock = await waiting;
        expect(lock.held).toBe(true);
        await lock.release();
        expect(await viaWithLock).toBe('ran');
        await other.close();
        expect(warnings.filter((w) => w.name === 'TimeoutOverflowWarning')).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });
  });
}
