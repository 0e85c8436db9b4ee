import { LocalCohort } from './local-cohort.js';

/**
 * Fencing tokens the hand-off asks a store to reserve per grant: the grant's
 * own and up to 15 for local hand-offs that follow it. @internal
 */
export const FENCE_BLOCK = 16;

/**
 * Least lease, in ms, that a local hand-off passes on to a waiter that
 * renews (less when its `ttl` is short: half of it): the waiter renews it at
 * half of what is left, as it does a store hand-off's short lease. @internal
 */
const MIN_HANDED_LEASE_MS = 1_000;

/** A caller of this process queued behind its own process for a lock. @internal */
export interface CohortWaiter {
  /** Arrival order within the manager. */
  readonly seq: number;
  readonly ttl: number;
  readonly renew: boolean;
}

/** What a cohort needs of the lock its holder holds. @internal */
export interface CohortHolder {
  /** `false` once released or lost (or past its lease, as far as this process can tell). */
  readonly held: boolean;
}

/** The next local holder of a store grant: the waiter, and the reserved fencing token it takes. @internal */
export interface NextHolder<W> {
  readonly waiter: W;
  readonly fencingToken: number;
}

/**
 * The callers of one process for one lock key in a shared store (lock
 * cohorting): at most one of them queues at the store, the others wait here
 * and are handed the lock on release, one bounded turn per store grant. See
 * docs/engine.md, "Local hand-off". Its methods answer who goes next (to
 * hold the lock, or to queue at the store); the hand-off sends them. @internal
 */
export class LockCohort<W extends CohortWaiter, H extends CohortHolder> extends LocalCohort<W> {
  /** The local holder of the store's grant, while one holds it. */
  private holder: H | undefined;
  private nextFence = 0;
  private lastFence = -1;
  /** Waiters with a smaller `seq` came before the grant: they may be handed the lock. */
  private batchEnd = 0;
  /** Hand-offs this turn may still make to waiters that came after the grant (see {@link hold}). */
  private extra = 0;

  /** Whether a caller of this process holds the lock or queues at the store for it: new callers then wait here. */
  get busy(): boolean {
    return this.holder !== undefined || this.line.atStore > 0;
  }

  /** Whether a caller of this process holds the lock (on a lease it has not seen end). */
  get holds(): boolean {
    return this.holder !== undefined && this.holder.held;
  }

  /** No holder, no caller at the store and no waiter: the cohort can be forgotten. */
  get idle(): boolean {
    return this.holder === undefined && this.line.atStore === 0 && !this.line.queued;
  }

  /**
   * `lock` holds the store's grant now. A grant from the store reserves
   * `fences` tokens from `fencingToken` on and opens a turn: the batch of
   * the waiters that arrived before `arrivals` (all those queued here now),
   * then, while the turn has run fewer than half as many sections again as
   * it started with, waiters that came later (a turn that starts with 4
   * callers runs at most 6 sections); a local hand-off keeps the turn.
   */
  hold(lock: H, fromStore?: { fencingToken: number; fences: number; arrivals: number }): void {
    this.holder = lock;
    if (fromStore) {
      this.nextFence = fromStore.fencingToken + 1;
      this.lastFence = fromStore.fencingToken + fromStore.fences - 1;
      this.batchEnd = fromStore.arrivals;
      this.extra = (1 + this.line.waiting.length) >> 1;
    }
  }

  /**
   * On release of `from`: the next waiter, taken out of the line, with the
   * reserved token to hand it the lock with, if the turn has room for it
   * (see {@link hold}), a reserved token is left and enough of the lease is
   * left. `undefined`: the caller releases at the store (then calls {@link left}).
   */
  handOver(from: H, leaseLeftMs: number): NextHolder<W> | undefined {
    if (this.holder !== from) return undefined;
    const next = this.line.first;
    if (next === undefined || this.nextFence > this.lastFence) return undefined;
    const late = next.seq >= this.batchEnd;
    if (late && this.extra <= 0) return undefined;
    const needed = next.renew ? Math.min(MIN_HANDED_LEASE_MS, next.ttl / 2) : next.ttl;
    if (!(leaseLeftMs >= needed)) return undefined;
    if (late) this.extra--;
    this.line.shift();
    return { waiter: next, fencingToken: this.nextFence++ };
  }

  /** `lock` no longer holds (released at the store, or lost): the next waiter, which goes to queue at the store. */
  left(lock: H): W | undefined {
    if (this.holder !== lock) return undefined;
    this.holder = undefined;
    return this.advance();
  }

  /** With nobody of this process holding or at the store, the first waiter goes there. */
  protected advance(): W | undefined {
    if (this.holder !== undefined || this.line.atStore > 0) return undefined;
    const next = this.line.shift();
    if (next !== undefined) this.line.atStore++;
    return next;
  }
}
