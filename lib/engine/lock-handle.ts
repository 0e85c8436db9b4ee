import { lockScope, type LockEntry, type LockScope } from './lock-context.js';
import { LockLostError, LockOptionsError } from '../errors/lock.errors.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import { isThenable, type LockProvider, type MaybePromise } from '../contract/lock-provider.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import { lostDetails, optionMessage, releaseFailedLog, renewFailedLog } from '../errors/lock.messages.js';
import { TimedNode, type TimedList } from '../shared/timer.js';
import type { CohortWaiter, LockCohort } from './lock-cohort.js';
import { now } from '../shared/clock.js';

/**
 * A lock you hold. Returned by `LockService.acquire()` / `tryAcquire()`,
 * passed to `withLock` callbacks, and reachable inside any locked call with
 * `LockService.current()`.
 *
 * @example
 * ```ts
 * await locks.withLock('ledger', async (lock) => {
 *   await ledger.write(entry, { fencingToken: lock.fencingToken, signal: lock.signal });
 * });
 * ```
 */
export interface LockHandle {
  /** The lock's name, without the key prefix. */
  readonly name: string;
  /** The store key (prefix included). */
  readonly key: string;
  /**
   * Strictly greater than every earlier grant's token for this name: pass it
   * to storage that rejects stale writers. Redis and PostgreSQL draw tokens
   * no lower than the store's clock in microseconds; after a failover of the
   * store, tokens keep growing as long as the new primary's clock is not
   * behind the old one's by more than the failover took (with Redis,
   * `waitForReplicas` removes that assumption).
   */
  readonly fencingToken: number;
  /** Aborts, with a {@link LockLostError} as its `reason`, when the lock is lost while held. */
  readonly signal: AbortSignal;
  /** `true` until released or lost. */
  readonly held: boolean;
  /**
   * Sets the lease to end `ms` from now (default: the lock's `ttl`).
   * @throws {LockOptionsError} when `ms` is not a finite number > 0.
   * @throws {LockLostError} when the lock is no longer held by this handle.
   * @throws {LockStoreError} when the store fails.
   */
  extend(ms?: number): Promise<void>;
  /**
   * Frees the lock (or, with `holdAtLeast`, shortens it to the remaining
   * minimum). Never throws: a store failure is logged, and the lease then
   * expires on its own. Returns `false` when it was already released or lost.
   * Releasing twice is harmless.
   */
  release(): Promise<boolean>;
}

/** Settings a held lock needs from the manager. @internal */
export interface HeldLockContext {
  readonly provider: LockProvider;
  readonly logger: LockLogger;
  readonly emit: (event: LockEvent) => void;
  /** The manager's held locks: a lock is a member from grant to release or loss, and is called back through it. */
  readonly held: TimedList;
  readonly managerId: number;
  /** Whether anyone listens to events (durations are measured only then). */
  observed: boolean;
  /** Logs a store failure, once per cause and interval (the repeats are counted and summarized). */
  readonly logStoreFailure: (level: 'warn' | 'error', error: unknown, line: string) => void;
}

/** Per-acquisition settings. @internal */
export interface HeldLockSettings {
  readonly ttl: number;
  readonly renew: boolean;
  readonly maxHold?: number;
  readonly holdAtLeast?: number;
  readonly label?: string;
}


/**
 * The engine's implementation of {@link LockHandle}. It is also its own scope
 * node (for `currentLock()` and reentrancy detection) and its own entry for a
 * scoped call, so one object is all an acquisition allocates. @internal
 */
export class HeldLock extends TimedNode implements LockHandle, LockScope, LockEntry {
  /** When the lease started (performance.now() time). */
  readonly acquiredAt: number;
  readonly managerId: number;
  /** Created when `signal` is first read: most sections never look at it. */
  private controller: AbortController | undefined;
  private lostReason: LockLostError | undefined;
  private state: 'held' | 'lost' | 'released' = 'held';
  /** Local time at which the store's lease ends unless extended (measured from before the call that set it). @internal */
  leaseEnd: number;
  /** The callers of this process for the same key, when the store reserves fencing tokens for local hand-offs. @internal */
  cohort: Pick<LockCohort<CohortWaiter>, 'handOver' | 'left' | 'queued'> | undefined;
  /** The grant came after waiting behind another holder. @internal */
  queued = false;
  private renewing = false;
  /** Renewal stopped short of a full `ttl` because of `maxHold`. */
  private capped = false;

  constructor(
    readonly name: string,
    readonly key: string,
    readonly owner: string,
    readonly fencingToken: number,
    private readonly settings: HeldLockSettings,
    private readonly ctx: HeldLockContext,
    requestedAt: number,
    leaseMs: number,
    /** The lock scope this lock was taken in (for a scoped call). */
    readonly parentScope: LockScope | undefined,
  ) {
    super();
    this.managerId = ctx.managerId;
    this.acquiredAt = requestedAt;
    this.leaseEnd = requestedAt + Math.min(leaseMs, settings.ttl);
    this.schedule(requestedAt);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostReason) this.controller.abort(this.lostReason);
    }
    return this.controller.signal;
  }

  get held(): boolean {
    return this.state === 'held';
  }

  /** The call's `label` option. @internal */
  get label(): string | undefined {
    return this.settings.label;
  }

  /** {@link LockEntry}: this lock. @internal */
  get handle(): LockHandle {
    return this;
  }

  /** Runs `fn(...args)` with this lock as the innermost of the call chain. @internal */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    return lockScope.run(this, fn, ...args);
  }

  async extend(ms: number = this.settings.ttl): Promise<void> {
    if (!(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
      throw new LockOptionsError(optionMessage(`extend(ms) of lock "${this.name}"`, 'ms', 'a finite number > 0', ms));
    }
    if (this.state !== 'held') {
      throw this.lostReason ?? new LockLostError(this.name, lostDetails.alreadyReleased);
    }
    const started = now();
    const ok = await this.ctx.provider.extend(this.key, this.owner, ms);
    if (this.state !== 'held') throw this.lostReason ?? new LockLostError(this.name, lostDetails.releasedMeanwhile);
    if (!ok) {
      this.lose(lostDetails.takenOver);
      throw this.lostReason!;
    }
    this.leaseEnd = started + ms;
    this.ctx.emit({ type: 'extended', name: this.name, fencingToken: this.fencingToken, ttl: ms });
    this.schedule();
  }

  release(): Promise<boolean> {
    const released = this.exit();
    return isThenable(released) ? released : Promise.resolve(released);
  }

  /** {@link release}, answering synchronously when the store does. Never throws. @internal */
  exit(): MaybePromise<boolean> {
    if (this.state === 'released') return false;
    const wasHeld = this.state === 'held';
    this.state = 'released';
    this.ctx.held.remove(this);
    const cohort = this.cohort;
    const t = cohort || this.settings.holdAtLeast !== undefined || this.ctx.observed ? now() : 0;
    const heldMs = t - this.acquiredAt;
    const remainingMin = this.settings.holdAtLeast === undefined ? 0 : this.settings.holdAtLeast - heldMs;
    // A waiter of this process queued before the store granted the key: it takes over, with no store call.
    if (cohort && wasHeld && remainingMin < 1 && cohort.handOver(this, this.leaseEnd - t)) return this.released(true, heldMs);
    const provider = this.ctx.provider;
    // With a waiter of this process about to queue, both calls may leave together (see LockProvider.coalesce).
    if (cohort?.queued && provider.coalesce !== undefined) return provider.coalesce(() => this.sendRelease(wasHeld, heldMs, remainingMin));
    return this.sendRelease(wasHeld, heldMs, remainingMin);
  }

  /** The store call of {@link exit}, then the next waiter of this process queues behind it. */
  private sendRelease(wasHeld: boolean, heldMs: number, remainingMin: number): MaybePromise<boolean> {
    let done: MaybePromise<boolean>;
    try {
      done =
        wasHeld && remainingMin >= 1
          ? // holdAtLeast: keep the key until the minimum has passed, so a late replica cannot run again.
            this.ctx.provider.extend(this.key, this.owner, Math.ceil(remainingMin))
          : // Owner-checked, so harmless after a loss; frees the key sooner if the store still has it.
            this.ctx.provider.release(this.key, this.owner);
    } catch (err) {
      this.cohort?.left(this);
      return this.releaseFailed(err);
    }
    // After the release was sent: the next waiter of this process queues at the store behind it.
    this.cohort?.left(this);
    if (isThenable(done)) {
      return done.then(
        () => this.released(wasHeld, heldMs),
        (err: unknown) => this.releaseFailed(err),
      );
    }
    return this.released(wasHeld, heldMs);
  }

  private released(wasHeld: boolean, heldMs: number): boolean {
    if (wasHeld && this.ctx.observed) this.ctx.emit({ type: 'released', name: this.name, label: this.settings.label, fencingToken: this.fencingToken, heldMs });
    return wasHeld;
  }

  private releaseFailed(err: unknown): false {
    const error = err instanceof Error ? err : new Error(String(err));
    this.ctx.logStoreFailure('error', error, releaseFailedLog(this.name, error.message));
    this.ctx.emit({ type: 'store-error', name: this.name, operation: 'release', error });
    return false;
  }

  /** Marks the lock lost, aborts the signal, warns. @internal */
  lose(detail: string): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.ctx.held.remove(this);
    this.cohort?.left(this);
    const reason = new LockLostError(this.name, detail);
    this.ctx.logger.warn(reason.message);
    this.lostReason = reason;
    this.ctx.emit({ type: 'lost', name: this.name, label: this.settings.label, fencingToken: this.fencingToken, heldMs: now() - this.acquiredAt, reason: detail });
    this.controller?.abort(reason);
  }

  /** Asks for the next call: the next renewal, or the end of the lease, whichever comes first. */
  private schedule(t = now()): void {
    if (this.state !== 'held') return; // release() and lose() already left the list
    let at = this.leaseEnd;
    if (this.settings.renew && !this.renewing) {
      // Every third of the ttl, and before a shorter lease (a hand-off not renewed yet) is half gone.
      if (this.renewalCap() > t) at = Math.min(at, t + this.settings.ttl / 3, t + (this.leaseEnd - t) / 2);
      else this.capped = true;
    }
    this.ctx.held.schedule(this, at);
  }

  private renewalCap(): number {
    return this.settings.maxHold === undefined ? Infinity : this.acquiredAt + this.settings.maxHold;
  }

  /** @internal */
  onTimer(): void {
    if (this.state !== 'held') return;
    const t = now();
    if (t >= this.leaseEnd) {
      const detail = this.capped
        ? lostDetails.maxHold(this.settings.maxHold)
        : this.renewing
          ? lostDetails.renewalUnreachable(this.settings.ttl)
          : this.settings.renew
            ? lostDetails.notRenewedInTime(this.settings.ttl)
            : lostDetails.renewOff(this.settings.ttl);
      this.lose(detail);
      return;
    }
    if (this.settings.renew && !this.renewing && this.renewalCap() > t) {
      void this.renew();
    }
    this.schedule();
  }

  private async renew(): Promise<void> {
    this.renewing = true;
    const started = now();
    const ttl = Math.max(1, Math.min(this.settings.ttl, Math.floor(this.renewalCap() - started)));
    if (ttl < this.settings.ttl) this.capped = true;
    let ok: boolean;
    try {
      ok = await this.ctx.provider.extend(this.key, this.owner, ttl);
    } catch (err) {
      this.renewing = false;
      if (this.state !== 'held') return;
      const error = err instanceof Error ? err : new Error(String(err));
      this.ctx.emit({ type: 'store-error', name: this.name, operation: 'extend', error });
      this.ctx.logStoreFailure('warn', error, renewFailedLog(this.name, error.message));
      this.schedule();
      return;
    }
    this.renewing = false;
    if (this.state !== 'held') return;
    if (!ok) {
      this.lose(lostDetails.takenOver);
      return;
    }
    this.leaseEnd = started + ttl;
    this.ctx.emit({ type: 'extended', name: this.name, fencingToken: this.fencingToken, ttl });
    this.schedule();
  }
}
