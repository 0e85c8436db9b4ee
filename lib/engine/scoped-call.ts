import type { LockEntry } from './lock-context.js';
import type { LockHandle } from './lock-handle.interface.js';
import { andThen, ownAnswer, type MaybePromise } from '../contract/maybe-promise.js';

/**
 * Runs `fn` under the lock a scoped call takes (`entering`: the entry, or
 * `undefined` when skipped, which answers `undefined` without running `fn`)
 * and releases it after. One path whether the store answered at once or with
 * a promise: a plain answer runs the section in the same turn, and a plain
 * result or a native promise costs no `await` (one `then` on the section's
 * promise). @internal
 */
export function runScoped<T>(
  entering: MaybePromise<LockEntry | undefined>,
  fn: (lock: LockHandle) => T | Promise<T>,
): Promise<T | undefined> {
  return Promise.resolve(andThen(entering, (entry) => (entry ? runEntered(entry, fn) : undefined)));
}

/** Runs `fn` under the entry's lock, then releases it (the section's error, if any, after the release). */
function runEntered<T>(entry: LockEntry, fn: (lock: LockHandle) => T | Promise<T>): MaybePromise<T> {
  let result: MaybePromise<T>;
  try {
    result = ownAnswer(entry.run(fn, entry.handle));
  } catch (err) {
    return andThen(entry.exit(), () => Promise.reject(err));
  }
  return andThen(
    result,
    (value) => andThen(entry.exit(), () => value),
    (err: unknown) => andThen(entry.exit(), () => Promise.reject(err)),
  );
}
