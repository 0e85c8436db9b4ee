/**
 * One observable thing that happened to a lock. Feed these to metrics:
 *
 * @example
 * ```ts
 * LockModule.forRoot({
 *   onEvent: (e) => {
 *     if (e.type === 'acquired') waitHistogram.observe({ lock: e.name }, e.waitMs);
 *     if (e.type === 'released') holdHistogram.observe({ lock: e.name }, e.heldMs);
 *   },
 * })
 * ```
 */
export type LockEvent =
  /** The lock was granted; `waitMs` is the time from request to grant. */
  | { type: 'acquired'; name: string; fencingToken: number; waitMs: number }
  /** The lock was freed (or shortened to `holdAtLeast`); `heldMs` from grant to release. */
  | { type: 'released'; name: string; fencingToken: number; heldMs: number }
  /** The lock was found held by another caller. */
  | { type: 'contended'; name: string; onHeld: 'throw' | 'skip' | 'wait' }
  /** The call did not run because the lock was held (`onHeld: 'skip'`) or the store failed on a scheduled tick. */
  | { type: 'skipped'; name: string; reason: 'held' | 'store-error' }
  /** A wait ran out (`waitTimeout`). */
  | { type: 'timeout'; name: string; waitMs: number }
  /** The lease was lost while held. */
  | { type: 'lost'; name: string; fencingToken: number; heldMs: number; reason: string }
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
