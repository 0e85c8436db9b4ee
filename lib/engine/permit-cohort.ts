import { CohortLine } from './cohort-line.js';
import type { CohortHolder, CohortWaiter } from './lock-cohort.js';

/**
 * Local hand-offs that one store grant of a permit may lead to: a permit
 * serves at most 4 callers of a process in a row before it goes back to the
 * store's FIFO queue. @internal
 */
export const PERMIT_HAND_OFFS = 3;

/** A permit's turn in its process: waiters that arrived before `end` may take it over, `left` more times. @internal */
export interface PermitTurn {
  readonly end: number;
  readonly left: number;
}

/** What a {@link PermitCohort} needs from the engine. @internal */
export interface PermitCohortHost<W extends CohortWaiter, H extends CohortHolder> {
  /**
   * Hands the permit `from` held over to `waiter` at the store (a new owner
   * and a fresh fencing token), then calls {@link PermitCohort.moved} (with
   * the new lock, or nothing when the waiter failed) or, when the store no
   * longer had `from`'s permit or failed, {@link PermitCohort.missed}.
   */
  transfer(waiter: W, from: H, cohort: PermitCohort<W, H>, turn: PermitTurn): void;
  /** Sends `waiter` to queue at the store itself (the cohort counted it already); ends with {@link PermitCohort.fromStore}. */
  toStore(waiter: W, cohort: PermitCohort<W, H>): void;
  /** The cohort has no holder, no caller at the store, no hand-off in flight and no waiter: forget it. */
  idle(cohort: PermitCohort<W, H>): void;
}

/**
 * The callers of one process for one semaphore key (exclusive, one limit)
 * in a store that can hand a permit over (`LockProvider.transfer`):
 * one of them queues at the store while the others wait here; a holder's
 * permit passes to the next waiter of the process that arrived before the
 * store granted that permit, up to {@link PERMIT_HAND_OFFS} times, each by a
 * store call that draws a fresh fencing token and names the new owner. See
 * docs/engine.md, "Local hand-off". @internal
 */
export class PermitCohort<W extends CohortWaiter, H extends CohortHolder> {
  /** The permits held by callers of this process, each with its turn. */
  private readonly turns = new Map<H, PermitTurn>();
  /** Hand-offs whose store call is in flight. */
  private moving = 0;
  /** The callers waiting here, and those at the store (more than one after a store failure or a missed hand-off). */
  readonly line = new CohortLine<W>();

  constructor(
    readonly key: string,
    /** The semaphore's limit: callers with another limit do not join (the store refuses them). */
    readonly limit: number,
    private readonly host: PermitCohortHost<W, H>,
  ) {}

  /** Whether a caller of this process queues at the store: new callers then wait here. */
  get busy(): boolean {
    return this.line.atStore > 0;
  }

  /** Whether a waiter is queued here. */
  get queued(): boolean {
    return this.line.queued;
  }

  /** Never: a try asks the store, where a permit may be free. */
  get holds(): boolean {
    return false;
  }

  /** The store granted `lock` a permit: its turn serves the waiters that arrived before `arrivals`. */
  granted(lock: H, arrivals: number): void {
    this.turns.set(lock, { end: arrivals, left: PERMIT_HAND_OFFS });
  }

  /**
   * On release of `from`: hands its permit to the next waiter if it belongs
   * to the permit's turn, hand-offs are left and the lease has not ended.
   * `false`: the caller releases at the store (then calls {@link left}).
   */
  handOver(from: H, leaseLeftMs: number): boolean {
    const turn = this.turns.get(from);
    const next = this.line.first;
    if (turn === undefined || next === undefined || next.seq >= turn.end || turn.left <= 0 || !(leaseLeftMs > 0)) return false;
    this.turns.delete(from);
    this.line.shift();
    this.moving++;
    this.host.transfer(next, from, this, { end: turn.end, left: turn.left - 1 });
    return true;
  }

  /** A hand-off's store call ended: `lock` holds the permit now, with `turn`; nothing when its waiter failed. */
  moved(lock?: H, turn?: PermitTurn): void {
    this.moving--;
    if (lock !== undefined && turn !== undefined) this.turns.set(lock, turn);
    else this.advance();
  }

  /** A hand-off did not happen (the store no longer had the permit, or failed): the waiter queues at the store. */
  missed(waiter: W): void {
    this.moving--;
    this.line.atStore++;
    this.host.toStore(waiter, this);
  }

  /** `lock` no longer holds (released at the store, or lost). */
  left(lock: H): void {
    if (this.turns.delete(lock)) this.advance();
  }

  /** A caller goes to queue at the store. */
  toStore(): void {
    this.line.atStore++;
  }

  /** A caller's store acquisition ended: granted (after {@link granted}), timed out, or failed (see {@link CohortLine.fromStore}). */
  fromStore(failed: boolean): void {
    this.line.fromStore(failed, (waiter) => this.host.toStore(waiter, this));
    this.advance();
  }

  /**
   * With nobody of this process at the store, the last waiter goes there (so
   * the process asks for the permits that free): the older ones stay first
   * in line for this process's permits, so none waits at the store while
   * younger ones are handed permits here.
   */
  private advance(): void {
    if (this.line.atStore > 0) return;
    const next = this.line.pop();
    if (next !== undefined) {
      this.line.atStore++;
      this.host.toStore(next, this);
    } else if (this.turns.size === 0 && this.moving === 0) {
      this.host.idle(this);
    }
  }
}
