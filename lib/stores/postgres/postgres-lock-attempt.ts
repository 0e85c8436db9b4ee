/** What one acquire statement asks for. @internal */
export interface PostgresLockAsk {
  readonly key: string;
  readonly owner: string;
  readonly ttl: number;
  /** Fencing tokens its grant reserves (plain locks only; else 1). */
  readonly fences: number;
  /** `mode: 'shared'`. */
  readonly shared: boolean;
  /** Exclusive holders the key admits (1 for a plain lock and for shared requests). */
  readonly limit: number;
  /** The lease (ms) a release that grants its queue entry directly gives it; `null`: it asks itself when notified. */
  readonly direct: number | null;
}

/** The answer of one acquire statement. @internal */
export interface PostgresLockAttempt {
  readonly token: number | null;
  /** The ticket taken when a first attempt that will wait was not granted. */
  readonly ticket: string | null;
  /** The token when this owner already holds the lock (a queued waiter's retry whose first try had committed). */
  readonly mine: number | null;
  readonly heldMs: number | null;
  readonly aheadMs: number | null;
  /** With `mine`: what was left of that lease, in ms. */
  readonly mineMs: number | null;
  /** The database clock when the statement ran (epoch ms). */
  readonly nowMs: number | null;
}
