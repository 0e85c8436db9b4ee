/**
 * Names and durations (docs/configuration.md, "Names and durations"): each kind of bad value is a
 * LockOptionsError naming the option, the value and the allowed range, before
 * any store call; the largest allowed values work on the store.
 */
import { randomBytes } from 'node:crypto';
import { MAX_DURATION_MS, MAX_KEY_PREFIX_LENGTH, MAX_LOCK_NAME_LENGTH } from '../../contract/lock.constants.js';
import { LockManager } from '../../engine/lock-manager.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import type { ConformanceContext } from '../conformance-case.interface.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { sleep } from '../sleep.js';
import {
  above,
  atMost,
  check,
  checkEqual,
  granted,
  isTrue,
  matches,
  refused as refusedGrant,
  rejection,
} from '../conformance-assert.js';

/** The store methods a lock call may reach. */
const STORE_CALLS = ['acquire', 'acquireMany', 'extend', 'extendMany', 'release', 'releaseMany', 'holder'] as const;

/** `MAX_LOCK_NAME_LENGTH` UTF-16 code units of 3- and 4-byte UTF-8 characters: the most bytes a name can have. */
const longestName = (tag: string): string => {
  const name = `${tag}:😀🔒` + '€'.repeat(MAX_LOCK_NAME_LENGTH);
  return name.slice(0, MAX_LOCK_NAME_LENGTH);
};

const silent = { debug() {}, warn() {}, error() {} };

/** A manager under a prefix of its own, the store calls it makes (recorded), and all undone after the case. */
function setUp({ p, onCleanup }: ConformanceContext): { locks: LockManager; prefix: string; calls: string[] } {
  const prefix = `limits:${randomBytes(6).toString('hex')}:`;
  const calls: string[] = [];
  const restore: (() => void)[] = [];
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
  const locks = new LockManager({ provider: p, keyPrefix: prefix, logger: silent });
  onCleanup(async () => {
    for (const r of restore) r();
    await locks.releaseAll();
  });
  return { locks, prefix, calls };
}

/** Runs `call`: a LockOptionsError whose message matches every pattern, and no store call. */
async function refusedAtCall(calls: string[], what: string, call: () => unknown, ...patterns: RegExp[]): Promise<void> {
  const error = await rejection(call, `${what} was not refused`);
  check(error instanceof LockOptionsError, `${what}: threw ${error.name}, not LockOptionsError: ${error.message}`);
  for (const pattern of patterns)
    matches(error.message, pattern, `${what}: the LockOptionsError does not say what is wrong`);
  checkEqual(calls, [], `${what} reached the store before it was refused`);
}

const range = /at most 2147483647 \(2\^31 − 1 ms, about 24\.8 days\)/;
const tooLong = [2 ** 31, 1e20, Infinity, NaN];

export function inputLimitsCases({ test, describe }: CaseRegistrar): void {
  describe('names and durations: one rule on every store (LockOptionsError before any store call)', [], () => {
    for (const option of ['ttl', 'waitTimeout', 'maxHold', 'holdAtLeast'])
      test(`${option} over 2^31 − 1 ms (or not finite) is refused at the call`, async (c) => {
        const { locks, calls } = setUp(c);
        for (const value of tooLong) {
          const shown = new RegExp(`${option} must be .*, got ${String(value).replace('+', '\\+')}\\.`);
          const what = `${option} ${value}`;
          await refusedAtCall(
            calls,
            `withLock with ${what}`,
            () => locks.withLock('n', () => 1, { onHeld: 'wait', [option]: value }),
            /^withLock\("n"\): /,
            shown,
            range,
          );
          await refusedAtCall(
            calls,
            `acquire with ${what}`,
            () => locks.acquire('n', { [option]: value }),
            shown,
            range,
          );
          if (option !== 'waitTimeout')
            await refusedAtCall(
              calls,
              `tryAcquire of two names with ${what}`,
              () => locks.tryAcquire(['a', 'b'], { [option]: value }),
              shown,
              range,
            );
        }
      });

    test('extend(ms) over 2^31 − 1 ms is refused before the store is asked; the lock stays held', async (c) => {
      const { locks, calls } = setUp(c);
      const lock = await locks.acquire('n');
      calls.length = 0;
      for (const value of tooLong)
        await refusedAtCall(
          calls,
          `extend(${value})`,
          () => lock.extend(value),
          /extend\(ms\) of lock "n": ms must be/,
          range,
        );
      check(lock.held, 'a refused extend() ended the lock');
      await lock.release();
    });

    test('a name over MAX_LOCK_NAME_LENGTH code units (1 MB too) is refused, with its length', async (c) => {
      const { locks, calls } = setUp(c);
      for (const name of [
        'x'.repeat(MAX_LOCK_NAME_LENGTH + 1),
        '€'.repeat(MAX_LOCK_NAME_LENGTH + 1),
        'x'.repeat(1 << 20),
      ]) {
        const pattern = new RegExp(
          `a lock name must be at most ${MAX_LOCK_NAME_LENGTH} characters \\(UTF-16 code units.*\\(${name.length} characters\\)`,
        );
        const what = `a name of ${name.length} characters`;
        await refusedAtCall(
          calls,
          `withLock with ${what}`,
          () => locks.withLock(name, () => 1),
          /^withLock\(\)/,
          pattern,
        );
        await refusedAtCall(calls, `tryAcquire with ${what}`, () => locks.tryAcquire(name), pattern);
        await refusedAtCall(calls, `acquire with ${what}`, () => locks.acquire(['ok', name]), /names\[1\]/, pattern);
      }
    });

    for (const [kind, name, found] of [
      ['NUL', 'a\u0000b', 'a control character U+0000 at index 1'],
      ['a newline', 'a\nb', 'a control character U+000A at index 1'],
      ['DEL', 'ab\u007f', 'a control character U+007F at index 2'],
      ['a C1 control', '\u0085ab', 'a control character U+0085 at index 0'],
      ['a lone high surrogate', 'ab\ud83d', 'a lone surrogate U+D83D at index 2'],
      ['a lone low surrogate', 'a\ude00b', 'a lone surrogate U+DE00 at index 1'],
      ['a reversed pair', 'a\ude00\ud83db', 'a lone surrogate U+DE00 at index 1'],
    ])
      test(`a name with ${kind} is refused, naming the character and the rule`, async (c) => {
        const { locks, calls } = setUp(c);
        const pattern = new RegExp(
          `the lock name .* holds ${found.replace('+', '\\+')}; a lock name may hold any Unicode text except control characters`,
        );
        await refusedAtCall(calls, `withLock of a name with ${kind}`, () => locks.withLock(name, () => 1), pattern);
        await refusedAtCall(calls, `tryAcquire of a name with ${kind}`, () => locks.tryAcquire([name, 'ok']), pattern);
        await refusedAtCall(calls, `acquire of a name with ${kind}`, () => locks.acquire(name), pattern);
      });

    test('keyPrefix: over MAX_KEY_PREFIX_LENGTH code units, or with a control character, is refused when the manager is made', async (c) => {
      const { p } = c;
      const { calls } = setUp(c);
      const made = (options: Partial<ConstructorParameters<typeof LockManager>[0]>) => () =>
        new LockManager({ provider: p, ...options });
      await refusedAtCall(
        calls,
        'a keyPrefix too long',
        made({ keyPrefix: 'p'.repeat(MAX_KEY_PREFIX_LENGTH + 1) }),
        new RegExp(`a keyPrefix must be at most ${MAX_KEY_PREFIX_LENGTH} characters`),
      );
      await refusedAtCall(
        calls,
        'a keyPrefix with NUL',
        made({ keyPrefix: 'app\u0000' }),
        /the keyPrefix "app\\u0000" holds a control character U\+0000/,
      );
      await refusedAtCall(
        calls,
        'a default ttl too long',
        made({ ttl: 2 ** 31 }),
        /LockModule options: ttl must be .* at most 2147483647/,
      );
      await refusedAtCall(
        calls,
        'a default waitTimeout too long',
        made({ waitTimeout: 1e20 }),
        /waitTimeout must be .*, got 100000000000000000000\./,
      );
    });

    test('the longest name (non-ASCII, surrogate pairs) under the longest non-ASCII prefix works, and is one lock', async (c) => {
      const { p } = c;
      const { prefix } = setUp(c);
      const longPrefix = `${prefix}${'ß€'.repeat(MAX_KEY_PREFIX_LENGTH)}`.slice(0, MAX_KEY_PREFIX_LENGTH);
      const manager = new LockManager({ provider: p, keyPrefix: longPrefix, logger: silent });
      c.onCleanup(() => manager.releaseAll());
      const name = longestName('a');
      above(Buffer.byteLength(longPrefix + name), 1_800, 'the longest key is not as long as it should be (bytes)');
      const lock = await manager.acquire(name);
      refusedGrant(
        await manager.tryAcquire(name),
        'the longest name was granted twice (the store cut or mangled the key)',
      );
      granted(
        await manager.tryAcquire(longestName('b')),
        'two different longest names were one lock (the store cut the key)',
      );
      await lock.extend(5_000);
      await lock.release();
      granted(await manager.tryAcquire(name), 'the longest name was not free after its release');
    });

    test(
      'the longest ttl is taken by the store as given, and so is extend(MAX_DURATION_MS)',
      async (c) => {
        const { p } = c;
        const { locks, prefix } = setUp(c);
        const key = prefix + 'longest-ttl';
        const lock = await locks.acquire('longest-ttl', {
          ttl: MAX_DURATION_MS,
          renew: false,
          maxHold: MAX_DURATION_MS,
        });
        above(
          (await p.holder!(key))?.remainingMs,
          MAX_DURATION_MS - 60_000,
          'the store did not keep the longest ttl (remainingMs)',
        );
        atMost(
          (await p.holder!(key))?.remainingMs,
          MAX_DURATION_MS,
          'the store gave more lease than the longest ttl (remainingMs)',
        );
        await lock.extend(1_000);
        atMost(
          (await p.holder!(key))?.remainingMs,
          1_000,
          'extend(1000) after the longest ttl did not shorten the lease (remainingMs)',
        );
        await lock.extend(MAX_DURATION_MS);
        above(
          (await p.holder!(key))?.remainingMs,
          MAX_DURATION_MS - 60_000,
          'the store did not keep extend(MAX_DURATION_MS) (remainingMs)',
        );
        refusedGrant(await locks.tryAcquire('longest-ttl'), 'a lock with the longest ttl was granted again');
        await lock.release();
        checkEqual(await p.holder!(key), null, 'a released lock with the longest ttl still has a holder');
      },
      { needs: ['holder'] },
    );

    test(
      'the store itself takes the longest ttl and waitTimeout: a waiter waits until release',
      async (c) => {
        const { p } = c;
        const { prefix } = setUp(c);
        const key = `${prefix}store-wait`;
        granted(
          await p.acquire({ key, owner: 'holder', ttl: MAX_DURATION_MS, wait: false }),
          'acquire() with the longest ttl answered null',
        );
        let settled = false;
        const waiting = Promise.resolve(
          p.acquire({ key, owner: 'waiter', ttl: MAX_DURATION_MS, wait: true, waitTimeout: MAX_DURATION_MS }),
        ).finally(() => (settled = true));
        await sleep(600);
        check(!settled, 'a wait with the longest waitTimeout ended at once (a timer overflow?)');
        isTrue(await p.release(key, 'holder'), 'release() by the owner answered false');
        granted(await waiting, 'a waiter with the longest waitTimeout was not woken by the release');
        isTrue(await p.extend(key, 'waiter', MAX_DURATION_MS), 'extend() with the longest ttl answered false');
        isTrue(await p.release(key, 'waiter'), 'release() by the woken waiter answered false');
      },
      { needs: ['waiting'] },
    );

    test(
      'the longest waitTimeout waits (no 1 ms time-out, no TimeoutOverflowWarning) until the holder releases',
      async (c) => {
        const { p } = c;
        const { locks, prefix } = setUp(c);
        const warnings: Error[] = [];
        const onWarning = (w: Error) => warnings.push(w);
        process.on('warning', onWarning);
        c.onCleanup(() => process.off('warning', onWarning));
        const holder = await locks.acquire('long-wait');
        const other = new LockManager({ provider: p, keyPrefix: prefix, logger: silent });
        c.onCleanup(() => other.close());
        let settled = false;
        const waiting = other.acquire('long-wait', { waitTimeout: MAX_DURATION_MS }).finally(() => (settled = true));
        const viaWithLock = other.withLock('long-wait', () => 'ran', { onHeld: 'wait', waitTimeout: MAX_DURATION_MS });
        await sleep(600);
        check(!settled, 'a wait with the longest waitTimeout ended at once (a timer overflow?)');
        await holder.release();
        const lock = await waiting;
        check(lock.held, 'the waiter with the longest waitTimeout does not hold the lock');
        await lock.release();
        checkEqual(await viaWithLock, 'ran', 'withLock with the longest waitTimeout did not run after the release');
        checkEqual(
          warnings.filter((w) => w.name === 'TimeoutOverflowWarning').map((w) => w.message),
          [],
          'a wait with the longest waitTimeout set a timer Node cannot keep (TimeoutOverflowWarning)',
        );
      },
      { needs: ['waiting'] },
    );
  });
}
