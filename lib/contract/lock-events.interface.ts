/**
 * One observable thing that happened to a lock. Feed these to metrics (or
 * turn on the built-in OpenTelemetry metrics, see the README). `label` is the
 * call's `label` option (the `@Locked` name template by default): use it,
 * not `name`, as a metric attribute when names carry ids.
 *
 * Every call for a lock ends with one `answered` event; a call that may wait
 * starts with a `waiting` event.
 *
 * @example
 * ```ts
 * LockModule.forRoot({
 *   onEvent: (e) => {
 *     if (e.type === 'answered') waitHistogram.observe({ lock: e.label ?? 'other', outcome: e.outcome }, e.waitMs);
 *     if (e.type === 'released') holdHistogram.observe({ lock: e.label ?? 'other' }, e.heldMs);
 *   },
 * })
 * ```
 */
export type LockEvent =
  /** A call that may wait (`onHeld: 'wait'`, `acquire()`) asked for the lock. Its `answered` event follows. */
  | { type: 'waiting'; name: string; label: string | undefined }
  /**
   * A call for the lock got its answer: every call ends with one.
   * `waitMs`: from the call to the answer. `queued`: it waited behind
   * another holder. `wait`: the call could wait (it had a `waiting` event).
   */
  | {
      type: 'answered';
      name: string;
      label: string | undefined;
      wait: boolean;
      outcome: LockOutcome;
      waitMs: number;
      queued: boolean;
      /** The grant's fencing token (outcome `acquired`). */
      fencingToken: number | undefined;
    }
  /** The lock was granted; `waitMs` is the time from request to grant. */
  | { type: 'acquired'; name: string; label: string | undefined; fencingToken: number; waitMs: number }
  /** The lock was freed (or shortened to `holdAtLeast`); `heldMs` from grant to release. */
  | { type: 'released'; name: string; label: string | undefined; fencingToken: number; heldMs: number }
  /** The lock was found held by another caller. */
  | { type: 'contended'; name: string; onHeld: 'throw' | 'skip' | 'wait' }
  /** The call did not run because the lock was held (`onHeld: 'skip'`) or the store failed on a scheduled tick. */
  | { type: 'skipped'; name: string; reason: 'held' | 'store-error' }
  /** A wait ran out (`waitTimeout`). */
  | { type: 'timeout'; name: string; waitMs: number }
  /** The lease was lost while held. */
  | { type: 'lost'; name: string; label: string | undefined; fencingToken: number; heldMs: number; reason: string }
  /** The lease was renewed. */
  | { type: 'extended'; name: string; fencingToken: number; ttl: number }
  /** The store failed during `operation`. */
  | { type: 'store-error'; name: string; operation: string; error: Error }
  /** This instance became the leader of `name` (see `@Leader`); `name` is the leader name. */
  | { type: 'elected'; name: string; fencingToken: number; instanceId: string }
  /**
   * This instance stopped leading `name`: `reason` says why (`'returned'`,
   * `'threw'`, `'resigned'`, `'lost'`, `'stopped'`).
   */
  | { type: 'resigned'; name: string; fencingToken: number; heldMs: number; reason: LeadershipEndReason };

/** Why an instance stopped leading (see the `resigned` {@link LockEvent}). */
export type LeadershipEndReason = 'returned' | 'threw' | 'resigned' | 'lost' | 'stopped';

/** The `type` of a {@link LockEvent}. */
export type LockEventType = LockEvent['type'];

/**
 * How a call for a lock ended: `acquired`; `held` (held elsewhere, and the
 * call did not wait); `timeout` (`waitTimeout` passed); `store-error` (the
 * store failed); `aborted` (the call's signal aborted, or the application
 * shut down while it waited).
 */
export type LockOutcome = 'acquired' | 'held' | 'timeout' | 'store-error' | 'aborted';
