/**
 * The conformance kit catches broken stores: each store of broken-stores.ts
 * fails the case that checks what it broke, with a message that says so in
 * store terms. Cases run through the kit's programmatic API
 * (lockProviderConformance(...).cases), as an author registering them by hand would.
 */
import { jest } from '@jest/globals';
import { InMemoryLockProvider, LockOptionsError, type LockProvider } from '../../lib/index.js';
import {
  describeLockProviderConformance,
  lockProviderConformance,
  type ConformanceOptions,
  type ConformanceRunner,
} from '../../lib/testing/index.js';
import {
  EndlessLease,
  ReleaseWithoutOwnerCheck,
  RepeatingTokens,
  TryOvertakesWaiter,
  WaiterNeverWoken,
} from './broken-stores.js';

/** The error each named case fails with on `provider` (undefined: it passed). */
async function outcomes(
  provider: LockProvider,
  names: string[],
  options: ConformanceOptions = {},
): Promise<Map<string, Error | undefined>> {
  const suite = lockProviderConformance(provider.constructor.name, () => ({ provider }), options);
  const found = new Map<string, Error | undefined>();
  await suite.setUp();
  try {
    for (const name of names) {
      const c = suite.cases.find((k) => k.name === name);
      if (!c) throw new Error(`no case named "${name}"`);
      found.set(
        name,
        await c.run().then(
          () => undefined,
          (err: Error) => err,
        ),
      );
    }
  } finally {
    await suite.tearDown();
  }
  return found;
}

const BROKEN: Array<[fault: string, store: () => LockProvider, caseName: string, message: RegExp]> = [
  [
    'a release that does not check the owner',
    () => new ReleaseWithoutOwnerCheck(),
    'release frees the key for its owner only',
    /^release\(\) by a non-owner answered true/,
  ],
  [
    'fencing tokens that repeat',
    () => new RepeatingTokens(),
    'fencing tokens strictly increase across grants, releases and expiries',
    /^fencing token 2 of the key is not above the one before \(tokens: 1, 1,/,
  ],
  [
    'a lease that never ends',
    () => new EndlessLease(),
    'a lease expires: the key is free after ttl, and the old owner can no longer extend it',
    /^the lease never ended: the key was still held 900 ms after a 300 ms lease/,
  ],
  [
    'a waiter never woken',
    () => new WaiterNeverWoken(),
    'waiting: acquire with wait: true › a waiter is woken by release, long before the lease would end',
    /^a waiter was never woken by the release/,
  ],
  [
    'a try that overtakes a waiter',
    () => new TryOvertakesWaiter(),
    'waiting: acquire with wait: true › a try right after a release does not overtake a queued waiter: the release hands the key to the waiter',
    /^a try right after the release overtook the queued waiter/,
  ],
];

describe('the conformance kit catches broken stores, saying what broke', () => {
  test.each(BROKEN)('%s', async (_fault, store, caseName, message) => {
    const broken = (await outcomes(store(), [caseName])).get(caseName);
    expect(broken?.name).toBe('AssertionError');
    expect(broken?.message).toMatch(message);
    // The same case passes on the in-memory store the broken one is made from.
    expect((await outcomes(new InMemoryLockProvider(), [caseName])).get(caseName)).toBeUndefined();
  });
});

/** A runner that records what the kit registers. */
function recordingRunner(): ConformanceRunner & { names: string[] } {
  const names: string[] = [];
  const path: string[] = [];
  return {
    names,
    describe: (name, fn) => (path.push(name), fn(), path.pop()),
    it: (name: string) => void names.push([...path, name].join(' › ')),
    before: () => {},
    after: () => {},
  };
}

describe('what a store does not offer', () => {
  test('options and a missing pausedHolder leave the cases that need them out of the runner, and one warning names each with the reason', () => {
    const runner = recordingRunner();
    let said: string | undefined;
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      describeLockProviderConformance('Plain', () => ({ provider: new InMemoryLockProvider() }), runner, {
        waiting: false,
        limitAndShared: false,
      });
      expect(warn).toHaveBeenCalledTimes(1);
      said = String(warn.mock.calls[0]![0]);
    } finally {
      warn.mockRestore();
    }
    expect(said).toMatch(/^LockProvider conformance: Plain: \d+ case\(s\) not run, as its options and target ask:/);
    expect(said).toContain(
      '  - waiting: acquire with wait: true › waitTimeout 0 answers at once [not run: the store does not offer waiting ({ waiting: false })]',
    );
    expect(said).toContain(
      '  - semaphores (limit) and read/write locks (mode) › the store declares supports.limit and supports.shared [not run: the store does not offer limitAndShared ({ limitAndShared: false })]',
    );
    expect(
      (said ?? '')
        .split('\n')
        .filter((l) => l.includes('SIGSTOP') && l.includes('[not run: the target has no pausedHolder')),
    ).toHaveLength(2);
    const top = 'LockProvider conformance: Plain';
    expect(runner.names).toContain(`${top} › release frees the key for its owner only`);
    expect(runner.names).toContain(
      `${top} › does not offer limitAndShared: the store declares no supports.limit or supports.shared`,
    );
    // Nothing left out reaches the runner, under any name.
    expect(runner.names.some((n) => n.includes('waiting:') || n.includes('SIGSTOP'))).toBe(false);
  });

  test('a store that offers everything and a target with a pausedHolder: no warning', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      describeLockProviderConformance('Full', () => ({ provider: new InMemoryLockProvider() }), recordingRunner(), {
        pausedHolder: {
          spawn: () => {
            throw new Error('not called while the cases are registered');
          },
          sharesStore: false,
        },
      });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  test('an option turned off for something the store declares fails, and a method the store lacks fails naming the option', async () => {
    const off = await outcomes(
      new InMemoryLockProvider(),
      ['does not offer acquireMany: the store declares no acquireMany()'],
      { acquireMany: false },
    );
    expect([...off.values()][0]?.message).toMatch(
      /declares acquireMany\(\), but \{ acquireMany: false \} skips its cases: the engine would use it unchecked/,
    );
    class NoHolder extends InMemoryLockProvider {}
    Object.defineProperty(NoHolder.prototype, 'holder', { value: undefined });
    const missing = await outcomes(new NoHolder(), [
      'holder(): who holds a key › a plain owner token names no instance; a lease that ended has no holder',
    ]);
    expect([...missing.values()][0]?.message).toMatch(
      /NoHolder has no holder\(\); implement it, or pass \{ holder: false \}/,
    );
  });

  test('a runner without describe, it or hooks is refused with what to pass', () => {
    expect(() =>
      describeLockProviderConformance('X', () => ({ provider: new InMemoryLockProvider() }), {
        describe: () => {},
      } as never),
    ).toThrow(LockOptionsError);
    expect(() =>
      describeLockProviderConformance('X', () => ({ provider: new InMemoryLockProvider() }), {} as never),
    ).toThrow(/\{ describe, it, before, after \} \(node:test\)/);
  });
});
