import type { LockGrant } from '../contract/lock-provider.js';
import type { LockMode } from '../contract/lock-options.interface.js';

/** The call options the hand-off reads. @internal */
export interface HandOffOptions {
  readonly ttl: number;
  readonly renew: boolean;
  readonly waitTimeout?: number;
  readonly signal?: AbortSignal;
  readonly limit?: number;
  readonly mode?: LockMode;
}

/** One call's request for a lock, as the hand-off serves it. @internal */
export interface HandOffRequest {
  readonly name: string;
  /** The store key (prefix included). */
  readonly key: string;
  /** The owner token the call asks the store for (a plain lock handed over here keeps its store owner instead). */
  readonly owner: string;
  /** Queue for the lock (else try once). */
  readonly wait: boolean;
  /** When the call asked (performance.now() time): the earliest the store's lease can have started. */
  readonly requestedAt: number;
  readonly options: HandOffOptions;
}

/** What a local hold needs of its cohort (a `LockCohort` or a `PermitCohort`). @internal */
export interface HoldCohort {
  readonly key: string;
  /** Whether a waiter of this process is queued behind the holder. */
  readonly queued: boolean;
}

/**
 * A lock held by a caller of this process, as its cohort sees it: the
 * hand-off makes one per grant it serves, and the engine's lock keeps it
 * and gives it back on release or loss. @internal
 */
export class LocalHold {
  /** The lock as the engine keeps it (its lease clock); `undefined` until the engine made it. */
  lease: { readonly held: boolean } | undefined;

  constructor(
    readonly cohort: HoldCohort,
    /** The owner token at the store. */
    readonly owner: string,
  ) {}

  /** `false` once released or lost, or past its lease as far as this process can tell. */
  get held(): boolean {
    return this.lease === undefined || this.lease.held;
  }
}

/** What the hand-off answers for a granted request: the store's grant, or one handed over in this process. @internal */
export interface HandOffGrant extends LockGrant {
  /** The owner token at the store, when not the request's (a plain lock handed over keeps its holder's). */
  readonly owner?: string;
  /** Its place among the callers of this process for the key, when the hand-off serves it. */
  readonly hold?: LocalHold;
  /** Queued behind a caller of this process before the store granted it (the lock counts as queued; no `contended` event). */
  readonly queuedHere?: boolean;
  /** Local time from which the lock is not held, whatever its lease: its previous holder's, for a plain lock handed over. */
  readonly heldUntil?: number;
}

/** What the hand-off needs of a lock when it is released: its lease, as this process measures it. @internal */
export interface HandOffLease {
  /** Local time at which the store's lease ends unless extended. */
  readonly leaseEnd: number;
  /** Local time from which the lock is not held (the lease less its drift margin). */
  readonly heldUntil: number;
}
