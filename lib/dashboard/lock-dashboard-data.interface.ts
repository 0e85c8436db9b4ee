/** A held lock on the lock page (JSON: dates as ISO strings). */
export interface DashboardLock {
  readonly name: string;
  readonly mode: 'exclusive';
  readonly permits: number;
  /** The holding instance, when known. */
  readonly instanceId: string | null;
  /** Held by the process that serves the page. */
  readonly mine: boolean;
  readonly label: string | null;
  readonly fencingToken: number;
  readonly leaseRemainingMs: number;
  readonly heldSince: string | null;
  readonly waiters: number;
}

/** Counts of events per lock name, since the process started (bounded to the most recently active names). */
export interface DashboardCounts {
  readonly name: string;
  readonly acquired: number;
  readonly released: number;
  readonly lost: number;
  readonly timeouts: number;
  readonly storeErrors: number;
}

/** One recent lock event on the page. */
export interface DashboardEvent {
  readonly at: string;
  readonly type: 'acquired' | 'released' | 'lost' | 'timeout' | 'store-error';
  readonly name: string;
  readonly fencingToken?: number;
  readonly waitMs?: number;
  readonly heldMs?: number;
  /** Why a lease was lost, or which store operation failed and how (connection strings removed). */
  readonly detail?: string;
}

/** The JSON of the lock page (`<path>/data`). */
export interface LockDashboardData {
  /** `LockProvider.kind`. */
  readonly store: string;
  readonly generatedAt: string;
  readonly refreshMs: number;
  readonly locks: DashboardLock[];
  /** More locks are held than the page read (see `maxLocks`). */
  readonly more: boolean;
  /** An error reading the store, if the read failed (the events still show). */
  readonly storeError: string | null;
  readonly counts: DashboardCounts[];
  /** Newest first. */
  readonly recent: DashboardEvent[];
}
