import type { LockEntry } from './lock-context.js';
import type { LockHandle } from './lock-handle.interface.js';
import { isThenable } from '../contract/lock-provider.js';

/**
 * Runs `fn` under a lock already taken and releases it after. A plain result
 * or a native promise costs no `await`: one `then` on the section's promise.
 * `undefined` (skipped) answers `undefined` without running `fn`. @internal
 */
export function runEntered<T>(
  entry: LockEntry | undefined,
  fn: (lock: LockHandle) => T | Promise<T>,
): Promise<T | undefined> {
  if (!entry) return Promise.resolve(undefined);
  let result: T | Promise<T>;
  try {
    result = entry.run(fn, entry.handle);
  } catch (err) {
    const exited = entry.exit();
    return isThenable(exited) ? exited.then(() => Promise.reject(err)) : Promise.reject(err);
  }
  if (result instanceof Promise) {
    return result.then(
      (value: T) => {
        const exited = entry.exit();
        return isThenable(exited) ? exited.then(() => value) : value;
      },
      (err: unknown) => {
        const exited = entry.exit();
        return isThenable(exited) ? exited.then(() => Promise.reject(err)) : Promise.reject(err);
      },
    );
  }
  // A thenable that is not a native promise is awaited like any; a plain value is the answer.
  if (isThenable(result)) return runAwaited(entry, result);
  const exited = entry.exit();
  return isThenable(exited) ? exited.then(() => result as T) : Promise.resolve(result);
}

/** The section's result is a thenable but no native promise: awaited, then the release. */
async function runAwaited<T>(entry: LockEntry, result: PromiseLike<T>): Promise<T> {
  try {
    return await result;
  } finally {
    const exited = entry.exit();
    if (isThenable(exited)) await exited;
  }
}

/** {@link runEntered} once the lock is taken (the caller waited, or the store answers asynchronously). @internal */
export async function runWhenEntered<T>(
  entering: Promise<LockEntry | undefined>,
  fn: (lock: LockHandle) => T | Promise<T>,
): Promise<T | undefined> {
  const entry = await entering;
  if (!entry) return undefined;
  try {
    const result = entry.run(fn, entry.handle);
    return isThenable(result) ? await result : result;
  } finally {
    const exited = entry.exit();
    if (isThenable(exited)) await exited;
  }
}
