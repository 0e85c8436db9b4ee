/** A value, or a promise of it: in-process stores answer synchronously. Callers may always `await` it. */
export type MaybePromise<T> = T | Promise<T>;

// The only code of the library that tells a plain answer from a promise (docs/engine.md, "Where a
// synchronous answer is known"): everything else passes a MaybePromise on through these functions.

/** Whether `value` is a promise (or another thenable) rather than a plain answer. */
function isThenable<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * `next(value)`: at once for a plain value (no promise, no turn), else when
 * the promise resolves; `failed` gets its rejection (never a throw of
 * `next`). One shape for a synchronous and an asynchronous answer. @internal
 */
export function andThen<T, R>(
  value: MaybePromise<T>,
  next: (value: T) => MaybePromise<R>,
  failed?: (err: unknown) => MaybePromise<R>,
): MaybePromise<R> {
  return isThenable(value) ? value.then(next, failed) : next(value);
}

/** Every answer of `values`: the array at once when each is plain, else a promise of it. @internal */
export function allOf<T>(values: readonly MaybePromise<T>[]): MaybePromise<T[]> {
  return values.some(isThenable) ? Promise.all(values) : (values as T[]);
}

/**
 * What a function returned, as a {@link MaybePromise}: a plain value or a
 * native promise as it is, another thenable as a native promise (its `then`
 * runs in a later turn, as `await` would call it). @internal
 */
export function ownAnswer<T>(value: T | PromiseLike<T>): MaybePromise<T> {
  return value instanceof Promise || !isThenable(value as MaybePromise<T>)
    ? (value as MaybePromise<T>)
    : Promise.resolve(value);
}
