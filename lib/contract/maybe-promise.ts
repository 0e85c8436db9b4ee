/** A value, or a promise of it: in-process stores answer synchronously. Callers may always `await` it. */
export type MaybePromise<T> = T | Promise<T>;
