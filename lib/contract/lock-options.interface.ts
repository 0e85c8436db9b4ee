/**
 * What happens when a lock is already held by another caller:
 * - `'throw'`: fail at once with {@link LockAcquireError} (default);
 * - `'skip'`: do not run the protected code; the call returns `undefined`;
 * - `'wait'`: queue (FIFO) until the lock is free, up to `waitTimeout` ms,
 *   then throw {@link LockAcquireError}.
 */
export type OnHeld = 'throw' | 'skip' | 'wait';

/**
 * How a caller holds a name:
 * - `'exclusive'`: alone (default), or one of at most `limit` holders (a semaphore);
 * - `'shared'`: together with any number of other shared holders, never with
 *   an exclusive one (a read lock; `'exclusive'` is then the write lock).
 */
export type LockMode = 'shared' | 'exclusive';

/**
 * Per-call options, shared by `@Locked`, `LockService.withLock`, `acquire` and `tryAcquire`.
 * Every duration is in ms, at most `MAX_DURATION_MS` (2^31 − 1, about 24.8 days).
 */
export interface LockCallOptions {
  /** Lease length in ms. Renewed while the holder runs (see `renew`). Default: the module's `ttl` (30 000). */
  ttl?: number;
  /** Policy when the lock is held. Default: the module's `onHeld` (`'throw'`). */
  onHeld?: OnHeld;
  /** Longest wait in ms with `onHeld: 'wait'`. Default: the module's `waitTimeout` (unbounded). */
  waitTimeout?: number;
  /** Keep the lease alive while the holder runs, renewing every third of `ttl`. Default: the module's `renew` (`true`). */
  renew?: boolean;
  /** Upper bound in ms on how long renewal may keep the lock; after it the lock expires and the signal aborts. */
  maxHold?: number;
  /**
   * Keep the lock at least this many ms after it was taken, even if the work
   * finished sooner (ShedLock's `lockAtLeastFor`): on release, the lease is
   * shortened to the remaining minimum instead of deleted.
   */
  holdAtLeast?: number;
  /** Let a nested call for the same name run under the outer lock instead of failing with {@link LockReentryError}. Default `false`. */
  reentrant?: boolean;
  /**
   * Scheduled tasks only: when the store fails, run the tick anyway (`true`)
   * or skip it (`false`, default). See the README's "Scheduled tasks".
   */
  failOpen?: boolean;
  /**
   * How many exclusive holders the name admits at once (a semaphore's
   * permits): an integer >= 1. Every caller of one name must give the same
   * `limit`. Default 1: a plain lock. Not with `mode: 'shared'`.
   */
  limit?: number;
  /** `'shared'` (many readers) or `'exclusive'` (one writer). Default `'exclusive'`. */
  mode?: LockMode;
  /** Aborts a wait for the lock (the call then throws the signal's reason). */
  signal?: AbortSignal;
  /**
   * A short, low-cardinality name for this kind of lock, used by metrics,
   * traces and events instead of the lock name (which may carry ids, such as
   * `account:42`). Default with `@Locked`: the static name, or
   * `ClassName.methodName` when the name is a function; otherwise none.
   */
  label?: string;
}
