import type { LockEntry } from './lock-context.js';
import type { LockHandle } from './lock-handle.interface.js';
import { andThen, ownAnswer, type MaybePromise } from '../contract/maybe-promise.js';

/**
 * Runs `fn` under the lock a scoped call took (`entry`; `undefined` when
 * skipped, which answers `undefined` without running `fn`) and releases it
 * after, the section's error (if any) after the release. The engine calls it
 * on the store's answer, in the same promise turn: a plain answer runs the
 * section in the same turn, and a plain result or a native promise costs no
 * `await` (one `then` on the section's promise). @internal
 */
export function runScoped<T>(
  entry: LockEntry | undefined,
  fn: (lock: LockHandle) => T | Promise<T>,
): MaybePromise<T | undefined> {
  if (!entry) return undefined;
  let result: MaybePromise<T>;
  try {
    result = ownAnswer(entry.run(fn, entry.handle));
  } catch (err) {
    return entry.exitThen(() => Promise.reject(err));
  }
  return andThen(
    result,
    (value) => entry.exitThen(() => value),
    (err: unknown) => entry.exitThen(() => Promise.reject(err)),
  );
}
