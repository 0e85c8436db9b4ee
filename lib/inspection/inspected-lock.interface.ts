/** Options of `LockService.inspect()`. */
export interface LockInspectOptions {
  /** About this many locks per page, 1 to 1000. Default 100. */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string;
}

/** A lock held now, as `LockService.inspect()` reports it. Holds no owner token and no connection detail. */
export interface InspectedLock {
  /** The lock name (without the key prefix). */
  readonly name: string;
  /** `exclusive`: one holder at a time. */
  readonly mode: 'exclusive';
  /** How many holders it admits (1 for an exclusive lock). */
  readonly permits: number;
  /**
   * The instance that holds it: its `instanceId` (default `<hostname>:<pid>`),
   * which every owner token names; `undefined` for a token that names none
   * (a custom caller of the store).
   */
  readonly instanceId: string | undefined;
  /** Held by a caller of this process (this `LockService`). */
  readonly mine: boolean;
  /** The holder's `label` (locks of this process only). */
  readonly label: string | undefined;
  /**
   * The holder's fencing token for locks of this process; for others, the
   * newest token the store drew for the key (the holder's, or up to 15 above
   * it when the holder's process reserved a block for its own waiters).
   */
  readonly fencingToken: number;
  /** What is left of the lease, in ms. */
  readonly leaseRemainingMs: number;
  /** When it was granted (by the store's account for other instances' locks); `undefined` from a custom store that does not record it. */
  readonly heldSince: Date | undefined;
  /** Callers waiting for it: queued at the store, plus those of this process queued behind its own holder. */
  readonly waiters: number;
}

/** One page of `LockService.inspect()`. */
export interface LockInspection {
  /** `LockProvider.kind` of the store. */
  readonly store: string;
  readonly locks: InspectedLock[];
  /** Pass it as `cursor` for the next page; absent on the last page. */
  readonly cursor?: string;
}
