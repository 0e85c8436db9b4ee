import { LocalCohort } from './local-cohort.js';
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

/** The next holder of a permit: the waiter, and the turn it goes on with. @internal */
export interface NextPermitHolder<W> {
  readonly waiter: W;
  readonly turn: PermitTurn;
}

/**
 * The callers of one process for one semaphore key (exclusive, one limit)
 * in a store that can hand a permit over (`LockProviderCapabilities.transfer`):
 * one of them queues at the store while the others wait here; a holder's
 * permit passes to the next waiter of the process that arrived before the
 * store granted that permit, up to {@link PERMIT_HAND_OFFS} times, each by a
 * store call that draws a fresh fencing token and names the new owner. See
 * docs/engine.md, "Local hand-off". Its methods answer who goes next; the
 * hand-off sends them. @internal
 */
export class PermitCohort<W extends CohortWaiter, H extends CohortHolder> extends LocalCohort<W> {
  /** The permits held by callers of this process, each with its turn. */
  private readonly turns = new Map<H, PermitTurn>();
  /** Hand-offs whose store call is in flight. */
  private moving = 0;

  constructor(
    key: string,
    /** The semaphore's limit: callers with another limit do not join (the store refuses them). */
    readonly limit: number,
  ) {
    super(key);
  }

  /** Whether a caller of this process queues at the store: new callers then wait here. */
  get busy(): boolean {
    return this.line.atStore > 0;
  }

  /** Never: a try asks the store, where a permit may be free. */
  get holds(): boolean {
    return false;
  }

  /** No permit held here, no caller at the store, no hand-off in flight and no waiter: the cohort can be forgotten. */
  get idle(): boolean {
    return this.turns.size === 0 && this.moving === 0 && this.line.atStore === 0 && !this.line.queued;
  }

  /** The store granted `lock` a permit: its turn serves the waiters that arrived before `arrivals`. */
  granted(lock: H, arrivals: number): void {
    this.turns.set(lock, { end: arrivals, left: PERMIT_HAND_OFFS });
  }

  /**
   * On release of `from`: the next waiter, taken out of the line, to hand
   * its permit over to (then {@link moved} or {@link missed}), if it belongs
   * to the permit's turn, hand-offs are left and the lease has not ended.
   * `undefined`: the caller releases at the store (then calls {@link left}).
   */
  handOver(from: H, leaseLeftMs: number): NextPermitHolder<W> | undefined {
    const turn = this.turns.get(from);
    const next = this.line.first;
    if (turn === undefined || next === undefined || next.seq >= turn.end || turn.left <= 0 || !(leaseLeftMs > 0))
      return undefined;
    this.turns.delete(from);
    this.line.shift();
    this.moving++;
    return { waiter: next, turn: { end: turn.end, left: turn.left - 1 } };
  }

  /** A hand-off's store call ended: `lock` holds the permit now, with `turn`. */
  moved(lock: H, turn: PermitTurn): void {
    this.moving--;
    this.turns.set(lock, turn);
  }

  /** A hand-off did not happen (the store no longer had the permit, or failed): its waiter goes to queue at the store. */
  missed(): void {
    this.moving--;
    this.line.atStore++;
  }

  /** `lock` no longer holds (released at the store, or lost): the waiter that goes to queue at the store, if any. */
  left(lock: H): W | undefined {
    return this.turns.delete(lock) ? this.advance() : undefined;
  }

  /**
   * With nobody of this process at the store, the last waiter goes there (so
   * the process asks for the permits that free): the older ones stay first
   * in line for this process's permits, so none waits at the store while
   * younger ones are handed permits here.
   */
  protected advance(): W | undefined {
    if (this.line.atStore > 0) return undefined;
    const next = this.line.pop();
    if (next !== undefined) this.line.atStore++;
    return next;
  }
}
