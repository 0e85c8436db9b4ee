import { CohortLine } from './cohort-line.js';

/**
 * Fencing tokens the engine asks a store to reserve per grant: the grant's
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

/** A local hand-off of a store grant, from its holder to the next waiter. @internal */
export interface HandOff<W extends CohortWaiter, H extends CohortHolder> {
  readonly from: H;
  /** A token of the block the store reserved with the grant. */
  readonly fencingToken: number;
  /** What is left of the store's lease, in ms. */
  readonly leaseMs: number;
  readonly cohort: LockCohort<W, H>;
}

/** What a cohort needs from the engine. @internal */
export interface CohortHost<W extends CohortWaiter, H extends CohortHolder> {
  /**
   * Gives `waiter` the lock `handOff.from` held (same store owner and lease,
   * the given fencing token) and calls {@link LockCohort.hold} with it.
   * `false` when it could not (the waiter was failed): `from` releases at the store.
   */
  handTo(waiter: W, handOff: HandOff<W, H>): boolean;
  /** Sends `waiter` to queue at the store itself (the cohort counted it already); ends with {@link LockCohort.fromStore}. */
  toStore(waiter: W, cohort: LockCohort<W, H>): void;
  /** The cohort has no holder, no caller at the store and no waiter: forget it. */
  idle(cohort: LockCohort<W, H>): void;
}

/**
 * The callers of one process for one lock key in a shared store (lock
 * cohorting): at most one of them queues at the store, the others wait here
 * and are handed the lock on release, one bounded turn per store grant. See
 * docs/engine.md, "Local hand-off". @internal
 */
export class LockCohort<W extends CohortWaiter, H extends CohortHolder> {
  /** The local holder of the store's grant, while one holds it. */
  private holder: H | undefined;
  private nextFence = 0;
  private lastFence = -1;
  /** Waiters with a smaller `seq` came before the grant: they may be handed the lock. */
  private batchEnd = 0;
  /** Hand-offs this turn may still make to waiters that came after the grant (see {@link hold}). */
  private extra = 0;
  /** The callers waiting here, and those at the store. */
  readonly line = new CohortLine<W>();

  constructor(
    readonly key: string,
    private readonly host: CohortHost<W, H>,
  ) {}

  /** Whether a caller of this process holds the lock or queues at the store for it: new callers then wait here. */
  get busy(): boolean {
    return this.holder !== undefined || this.line.atStore > 0;
  }

  /** Whether a caller of this process holds the lock (on a lease it has not seen end). */
  get holds(): boolean {
    return this.holder !== undefined && this.holder.held;
  }

  /** Whether a waiter is queued here. */
  get queued(): boolean {
    return this.line.queued;
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
   * On release of `from`: hands the lock to the next waiter if the turn has
   * room for it (see {@link hold}), a reserved token is left and enough of
   * the lease is left. `false`: the caller releases at the store (then calls {@link left}).
   */
  handOver(from: H, leaseLeftMs: number): boolean {
    if (this.holder !== from) return false;
    const next = this.line.first;
    if (next === undefined || this.nextFence > this.lastFence) return false;
    const late = next.seq >= this.batchEnd;
    if (late && this.extra <= 0) return false;
    const needed = next.renew ? Math.min(MIN_HANDED_LEASE_MS, next.ttl / 2) : next.ttl;
    if (!(leaseLeftMs >= needed)) return false;
    if (late) this.extra--;
    this.line.shift();
    return this.host.handTo(next, { from, fencingToken: this.nextFence++, leaseMs: leaseLeftMs, cohort: this });
  }

  /** `lock` no longer holds (released at the store, or lost): the next waiter queues at the store. */
  left(lock: H): void {
    if (this.holder !== lock) return;
    this.holder = undefined;
    this.advance();
  }

  /** A caller goes to queue at the store. */
  toStore(): void {
    this.line.atStore++;
  }

  /** A caller's store acquisition ended: granted (after {@link hold}), timed out, or failed (see {@link CohortLine.fromStore}). */
  fromStore(failed: boolean): void {
    this.line.fromStore(failed, (waiter) => this.host.toStore(waiter, this));
    this.advance();
  }

  private advance(): void {
    if (this.holder !== undefined || this.line.atStore > 0) return;
    const next = this.line.shift();
    if (next === undefined) {
      this.host.idle(this);
      return;
    }
    this.line.atStore++;
    this.host.toStore(next, this);
  }
}
