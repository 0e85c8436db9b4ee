/**
 * The promise steps of a lock cycle on a store that answers with a promise
 * (as Redis, PostgreSQL and MySQL do): each costs its `then` and, with
 * `AsyncLocalStorage` on (the engine's lock scope), the promise hooks of every
 * promise in the process. One `then` on the store's answer to acquire (the
 * hand-off, the engine and the section call on with it) and one on the
 * release's: docs/performance.md, "A client-side regression, found and cut".
 * Counted, not timed.
 */
import { createHook } from 'node:async_hooks';
import { InMemoryLockProvider, LockManager, type LockAcquireRequest } from '../../lib/index.js';

/** The in-memory store, answering as a network store does: a native promise per call. */
class AsyncAnswers extends InMemoryLockProvider {
  override acquire(request: LockAcquireRequest) {
    return Promise.resolve(super.acquire(request));
  }
  override release(key: string, owner: string) {
    return Promise.resolve(super.release(key, owner));
  }
}

/** Promises the process creates per `withLock` cycle (the cycle's own `await` included). */
async function promisesPerCycle(onHeld: 'wait' | 'throw'): Promise<number> {
  const manager = new LockManager({ provider: new AsyncAnswers() });
  try {
    for (let i = 0; i < 20; i++) await manager.withLock('steps', () => i, { onHeld });
    let count = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === 'PROMISE') count++;
      },
    });
    const cycles = 100;
    hook.enable();
    try {
      for (let i = 0; i < cycles; i++) await manager.withLock('steps', () => i, { onHeld });
    } finally {
      hook.disable();
    }
    return count / cycles;
  } finally {
    await manager.close();
  }
}

describe('promise steps of an uncontended cycle on a store that answers with promises', () => {
  it.each(['wait', 'throw'] as const)(
    "onHeld '%s': the store's two answers, one then on each, and the caller's await",
    async (onHeld) => {
      // (2 store promises, 1 then on the acquire's answer, 1 on the release's, and 2 for the caller's
      // await while hooks are on: 6, where three more steps made 9; every extra step shows here)
      expect(await promisesPerCycle(onHeld)).toBeLessThanOrEqual(6);
    },
  );
});
