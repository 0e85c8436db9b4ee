import type { HeldLock } from '../engine/held-lock.js';
import { LockLostError } from '../errors/lock.errors.js';
import { leadershipEndDetails } from '../errors/lock.messages.js';
import type { LeadershipEndReason } from '../contract/lock-events.interface.js';
import { now } from '../shared/clock.js';
import { timerDelay } from '../shared/timer.js';

/**
 * This replica's leadership of a name, for one term: from election until it
 * is lost, resigned, or the leader method returns. Passed to a `@Leader`
 * method and to `campaign({ run })`. Read `signal` or `leading` right before
 * work that must not overlap with another leader (both check the local lease
 * clock, see docs/engine.md, "Leases and renewal"); pass `fencingToken` to
 * storage that can reject stale writers.
 *
 * @example
 * ```ts
 * @Leader('outbox-relay')
 * async relay(leadership: Leadership) {
 *   while (leadership.leading) {
 *     await this.outbox.publishBatch({ fencingToken: leadership.fencingToken, signal: leadership.signal });
 *   }
 * }
 * ```
 */
export interface Leadership {
  /** The leader name. */
  readonly name: string;
  /** This replica's instance id, as other replicas see it. */
  readonly instanceId: string;
  /** Greater than the token of every earlier term of this name: pass it to storage that rejects stale writers. */
  readonly fencingToken: number;
  /**
   * Aborts when the term ends, with a {@link LockLostError} as its reason:
   * lost (the lease could not be renewed in time, or the store no longer has
   * it), resigned, or the application is shutting down.
   */
  readonly signal: AbortSignal;
  /** `true` until the term ends. */
  readonly leading: boolean;
  /**
   * Gives leadership up: `signal` aborts now, and the name is released once
   * the leader method (if any) has returned. This replica campaigns again
   * after `retryDelay`.
   */
  resign(): void;
}

/** What a {@link LeaderTerm} starts from. @internal */
export interface LeaderTermSetup {
  readonly name: string;
  readonly instanceId: string;
  /** The lock that carries the leadership. */
  readonly lock: HeldLock;
  readonly ttl: number;
  /** Called once when the term ends. */
  readonly onEnd: (term: LeaderTerm, reason: LeadershipEndReason, detail: string) => void;
  /** The store's `watchConnection`, when it has one. */
  readonly watch?: (onLost: () => void) => () => void;
}

/**
 * One term of leadership over a held lock: steps down when three quarters of
 * the lease have passed since the last renewal (so before the store can hand
 * the name on), or at once when the lock is lost. @internal
 */
export class LeaderTerm implements Leadership {
  /** When the term started (performance.now() time). */
  readonly startedAt = now();
  /** Resolves with the reason once the term ended. */
  readonly ended: Promise<LeadershipEndReason>;
  private readonly controller = new AbortController();
  private reason: LeadershipEndReason | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private resolveEnded!: (reason: LeadershipEndReason) => void;
  /** How long before the local lease end the leader steps down. */
  private readonly margin: number;
  private unwatch: (() => void) | undefined;

  readonly name: string;
  readonly instanceId: string;
  /** The lock that carries the leadership. */
  readonly lock: HeldLock;
  private readonly onEnd: LeaderTermSetup['onEnd'];

  constructor({ name, instanceId, lock, ttl, onEnd, watch }: LeaderTermSetup) {
    this.name = name;
    this.instanceId = instanceId;
    this.lock = lock;
    this.onEnd = onEnd;
    this.margin = ttl / 4;
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    const lost = (): void => this.end('lost', leadershipEndDetails.leaseLost);
    if (lock.signal.aborted) {
      lost();
      return;
    }
    lock.signal.addEventListener('abort', lost, { once: true });
    // A store that restarts without its data forgets the lease: step down before it can elect another replica.
    this.unwatch = watch?.(() => this.end('lost', leadershipEndDetails.connectionDropped));
    this.arm();
  }

  get fencingToken(): number {
    return this.lock.fencingToken;
  }

  get signal(): AbortSignal {
    this.check();
    return this.controller.signal;
  }

  get leading(): boolean {
    this.check();
    return this.reason === undefined;
  }

  /** performance.now() time at which this leader steps down unless its lease is renewed first. @internal */
  get deadline(): number {
    return this.lock.leaseEnd - this.margin;
  }

  /** Why the term ended; `undefined` while it lasts. @internal */
  get endReason(): LeadershipEndReason | undefined {
    return this.reason;
  }

  resign(): void {
    this.end('resigned', leadershipEndDetails.resigned);
  }

  /** Steps down when the lease clock says so; called on every read of `signal`/`leading` and by the timer. @internal */
  check(): void {
    if (this.reason !== undefined) return;
    const t = now();
    if (t >= this.deadline) {
      this.end(
        'lost',
        leadershipEndDetails.notRenewed(
          Math.round(t - (this.lock.leaseEnd - this.margin * 4)),
          Math.round(this.margin),
        ),
      );
    }
  }

  /** Ends the term (once): aborts `signal`, reports through `onEnd`. The lock is released by the campaign. @internal */
  end(reason: LeadershipEndReason, detail: string): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.unwatch?.();
    this.controller.abort(new LockLostError(this.name, leadershipEndDetails.lost(detail)));
    this.resolveEnded(reason);
    this.onEnd(this, reason, detail);
  }

  /** Wakes at the step-down deadline; a renewal moves the deadline, so it looks again then. */
  private arm(): void {
    this.timer = setTimeout(
      () => {
        this.check();
        if (this.reason === undefined) this.arm();
      },
      timerDelay(Math.max(1, this.deadline - now())),
    );
    this.timer.unref?.();
  }
}
