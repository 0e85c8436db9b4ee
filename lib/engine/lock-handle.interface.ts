/**
 * A lock you hold. Returned by `LockService.acquire()` / `tryAcquire()`,
 * passed to `withLock` callbacks, and reachable inside any locked call with
 * `LockService.current()`.
 *
 * @example
 * ```ts
 * await locks.withLock('ledger', async (lock) => {
 *   await ledger.write(entry, { fencingToken: lock.fencingToken, signal: lock.signal });
 * });
 * ```
 */
export interface LockHandle {
  /** The lock's name, without the key prefix; for a lock of several names, its `names` joined with `,`. */
  readonly name: string;
  /** The store key (prefix included); for a lock of several names, their keys joined with `,`. */
  readonly key: string;
  /** Every name it holds, in canonical order (sorted): `[name]` for a lock of one name. */
  readonly names: readonly string[];
  /**
   * Strictly greater than every earlier grant's token for this name: pass it
   * to storage that rejects stale writers (see docs/engine.md, "Fencing tokens").
   * For a lock of several names: the first name's (see `fencingTokens`).
   */
  readonly fencingToken: number;
  /** The fencing token of each name it holds: `{ [name]: fencingToken }` for a lock of one name. */
  readonly fencingTokens: Readonly<Record<string, number>>;
  /**
   * Aborts, with a {@link LockLostError} as its `reason`, when the lock (any of its names) is lost while held.
   * Its `aborted`, `reason` and `throwIfAborted()` read the lease clock first: right at once after a pause.
   */
  readonly signal: AbortSignal;
  /**
   * `true` until released or lost (for several names: while every one is held). Read from the local lease
   * clock: `false` from the end of the last confirmed lease less a drift margin (1 % of it + 2 ms) on, even
   * when the process did not run meanwhile (see docs/guarantees.md).
   */
  readonly held: boolean;
  /**
   * Sets the lease to end `ms` from now (default: the lock's `ttl`).
   * @throws {LockOptionsError} when `ms` is not a number of ms > 0 and at most `MAX_DURATION_MS` (2^31 − 1).
   * @throws {LockLostError} when the lock is no longer held by this handle.
   * @throws {LockStoreError} when the store fails.
   */
  extend(ms?: number): Promise<void>;
  /**
   * Frees the lock (or, with `holdAtLeast`, shortens it to the remaining
   * minimum). Never throws: a store failure is logged, and the lease then
   * expires on its own. Returns `false` when it was already released or lost.
   */
  release(): Promise<boolean>;
}
