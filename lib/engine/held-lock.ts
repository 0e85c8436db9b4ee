import { lockScope, type LockEntry, type LockScope } from './lock-context.js';
import type { LockHandle } from './lock-handle.interface.js';
import { LockLostError } from '../errors/lock.errors.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import type { LockProvider } from '../contract/lock-provider.js';
import { andThen, type MaybePromise } from '../contract/maybe-promise.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import { lostDetails, releaseFailedLog, renewFailedLog, optionPlaces } from '../errors/lock.messages.js';
import { TimedNode, type TimedList } from '../shared/timer.js';
import type { LocalHandOff } from '../hand-off/local-hand-off.js';
import type { HandOffLease, LocalHold } from '../hand-off/hand-off-grant.js';
import { now } from '../shared/clock.js';
import type { LockRenewals } from './lock-renewal.js';
import { leaseDrift } from './lease-drift.js';
import { guardLeaseSignal, type LeaseClock } from './lease-signal.js';
import { assertDuration } from '../contract/lock-limits.validation.js';

const heldAsIs = (held: boolean): boolean => held;

/** Settings a held lock needs from the manager. @internal */
export interface HeldLockContext {
  readonly provider: LockProvider;
  readonly logger: LockLogger;
  readonly emit: (event: LockEvent) => void;
  /** The manager's held locks: a lock is a member from grant to release or loss, and is called back through it. */
  readonly held: TimedList<HeldLock>;
  readonly managerId: number;
  /** Whether anyone listens to events (durations are measured only then). */
  observed: boolean;
  /** Sends the renewals of the manager's held locks (batched when the store renews many in one call). */
  readonly renewals: LockRenewals;
  /** Logs a store failure, once per cause and interval (the repeats are counted and summarized). */
  readonly logStoreFailure: (level: 'warn' | 'error', error: unknown, line: string) => void;
  /** The local hand-off: a released lock goes to a waiter of this process through it, or leaves it for the store. */
  readonly handOff: LocalHandOff;
}

/** Per-acquisition settings. @internal */
export interface HeldLockSettings {
  readonly ttl: number;
  readonly renew: boolean;
  readonly maxHold?: number;
  readonly holdAtLeast?: number;
  readonly label?: string;
}

/** What a grant gives a new {@link HeldLock}. @internal */
export interface HeldLockGrant {
  readonly name: string;
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
  /** When the lease started (performance.now() time, taken before the store call). */
  readonly leaseStartedAt: number;
  /** The store's lease, in ms (capped at the settings' `ttl`). */
  readonly leaseMs: number;
  readonly settings: HeldLockSettings;
  /** The lock scope it was taken in (for a scoped call). */
  readonly parentScope: LockScope | undefined;
}

/**
 * The engine's {@link LockHandle}; also its own scope node, scoped-call
 * entry and renewal timer node (one object per acquisition). `held`,
 * `signal` and release read the lease clock: the lock is lost from
 * {@link heldUntil} on, whether or not a timer ran since (see docs/engine.md,
 * "Leases and renewal"). @internal
 */
export class HeldLock extends TimedNode implements LockHandle, LockScope, LockEntry, LeaseClock, HandOffLease {
  readonly name: string;
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
  /** The lock scope this lock was taken in (for a scoped call). */
  readonly parentScope: LockScope | undefined;
  private readonly settings: HeldLockSettings;
  /** When the lease started (performance.now() time). */
  readonly acquiredAt: number;
  readonly managerId: number;
  /** Created when `signal` is first read: most sections never look at it. */
  private controller: AbortController | undefined;
  private lostReason: LockLostError | undefined;
  private state: 'held' | 'lost' | 'released' = 'held';
  /** Local time at which the store's lease ends unless extended (measured from before the call that set it). @internal */
  leaseEnd: number;
  /** Local time from which the lock is not held: {@link leaseEnd} less the lease's drift margin ({@link leaseDrift}). @internal */
  heldUntil: number;
  /** Its place among the callers of this process for the key, when the local hand-off serves it. */
  private hold: LocalHold | undefined;
  /** The grant came after waiting behind another holder. @internal */
  queued = false;
  private renewing = false;
  /** Renewal stopped short of a full `ttl` because of `maxHold`. */
  private capped = false;

  constructor(
    grant: HeldLockGrant,
    private readonly ctx: HeldLockContext,
  ) {
    super();
    this.name = grant.name;
    this.key = grant.key;
    this.owner = grant.owner;
    this.fencingToken = grant.fencingToken;
    this.parentScope = grant.parentScope;
    this.settings = grant.settings;
    this.managerId = ctx.managerId;
    this.acquiredAt = grant.leaseStartedAt;
    const leaseMs = Math.min(grant.leaseMs, grant.settings.ttl);
    this.leaseEnd = grant.leaseStartedAt + leaseMs;
    this.heldUntil = this.leaseEnd - leaseDrift(leaseMs);
    this.schedule(grant.leaseStartedAt);
  }

  get signal(): AbortSignal {
    this.checkLease();
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.lostReason) this.controller.abort(this.lostReason);
      else if (this.state === 'held') guardLeaseSignal(this.controller.signal, this);
    }
    return this.controller.signal;
  }

  get held(): boolean {
    this.checkLease();
    return this.state === 'held';
  }

  /** Marks the lock lost when its lease is over, though no timer ran since (the process did not run): one clock read. @internal */
  checkLease(): void {
    if (this.state !== 'held') return;
    const t = now();
    if (t >= this.heldUntil) this.leaseRanOut(t);
  }

  /** A local hand-off: this lock goes on with its previous holder's store lease, so it is held no longer than that one would have been. @internal */
  continueLease(heldUntil: number): void {
    if (heldUntil >= this.heldUntil) return;
    this.heldUntil = heldUntil;
    this.schedule();
  }

  /** The local hand-off serves this lock: `hold` is its place among the callers of this process for the key. @internal */
  holdHere(hold: LocalHold): void {
    this.hold = hold;
    hold.lease = this;
  }

  get names(): readonly string[] {
    return [this.name];
  }

  get fencingTokens(): Readonly<Record<string, number>> {
    return { [this.name]: this.fencingToken };
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
    assertDuration(ms, 'ms', optionPlaces.extend(this.name), false);
    if (!this.held) {
      throw this.lostReason ?? new LockLostError(this.name, lostDetails.alreadyReleased);
    }
    const started = now();
    const ok = await this.ctx.provider.extend(this.key, this.owner, ms);
    if (this.state !== 'held') throw this.lostReason ?? new LockLostError(this.name, lostDetails.releasedMeanwhile);
    if (!ok) {
      this.lose(lostDetails.takenOver);
      throw this.lostReason!;
    }
    this.setLease(started, ms);
    if (this.ctx.observed)
      this.ctx.emit({ type: 'extended', name: this.name, fencingToken: this.fencingToken, ttl: ms });
    this.schedule();
  }

  release(): Promise<boolean> {
    return Promise.resolve(this.exit());
  }

  /** {@link release}, answering synchronously when the store does. Never throws. @internal */
  exit(): MaybePromise<boolean> {
    return this.exitThen(heldAsIs);
  }

  /** {@link exit}, then `next` of its answer, in the release's promise turn. @internal */
  exitThen<R>(next: (held: boolean) => MaybePromise<R>): MaybePromise<R> {
    if (this.state === 'released') return next(false);
    const t = now();
    // A lease over before any timer could tell (the process did not run) is lost, not released.
    if (this.state === 'held' && t >= this.heldUntil) this.leaseRanOut(t);
    const wasHeld = this.state === 'held';
    this.state = 'released';
    this.ctx.held.remove(this);
    const hold = this.hold;
    const heldMs = t - this.acquiredAt;
    const remainingMin = this.settings.holdAtLeast === undefined ? 0 : this.settings.holdAtLeast - heldMs;
    // A waiter of this process queued before the store granted the key: it takes over, with no store call.
    if (hold && wasHeld && remainingMin < 1 && this.ctx.handOff.handOver(hold, this, t))
      return next(this.released(true, heldMs));
    return this.sendRelease(wasHeld, heldMs, remainingMin, next);
  }

  /** The store call of {@link exitThen} (the next waiter of this process then queues behind it, see {@link LocalHandOff.leave}). */
  private sendRelease<R>(
    wasHeld: boolean,
    heldMs: number,
    remainingMin: number,
    next: (held: boolean) => MaybePromise<R>,
  ): MaybePromise<R> {
    const hold = this.hold;
    let done: MaybePromise<boolean>;
    try {
      done =
        hold === undefined
          ? this.storeRelease(remainingMin)
          : this.ctx.handOff.leave(hold, () => this.storeRelease(remainingMin));
    } catch (err) {
      return next(this.releaseFailed(err));
    }
    return andThen(
      done,
      () => next(this.released(wasHeld, heldMs)),
      (err: unknown) => next(this.releaseFailed(err)),
    );
  }

  /** Frees the key at the store, or with `holdAtLeast` time left keeps it (owner-checked) until that has passed. */
  private storeRelease(remainingMin: number): MaybePromise<boolean> {
    return remainingMin >= 1
      ? // holdAtLeast: keep the key until the minimum has passed, so a late replica cannot run again
        // (owner-checked: after a loss it keeps the key only if the store still has it under this owner).
        this.ctx.provider.extend(this.key, this.owner, Math.ceil(remainingMin))
      : // Owner-checked, so harmless after a loss; frees the key sooner if the store still has it.
        this.ctx.provider.release(this.key, this.owner);
  }

  private released(wasHeld: boolean, heldMs: number): boolean {
    if (wasHeld && this.ctx.observed)
      this.ctx.emit({
        type: 'released',
        name: this.name,
        label: this.settings.label,
        fencingToken: this.fencingToken,
        heldMs,
      });
    return wasHeld;
  }

  private releaseFailed(err: unknown): false {
    const error = err instanceof Error ? err : new Error(String(err));
    this.ctx.logStoreFailure('error', error, releaseFailedLog(this.name, error.message));
    if (this.ctx.observed) this.ctx.emit({ type: 'store-error', name: this.name, operation: 'release', error });
    return false;
  }

  /** Marks the lock lost, aborts the signal, warns. @internal */
  lose(detail: string): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.ctx.held.remove(this);
    if (this.hold) this.ctx.handOff.left(this.hold);
    const reason = new LockLostError(this.name, detail);
    this.ctx.logger.warn(reason.message);
    this.lostReason = reason;
    if (this.ctx.observed)
      this.ctx.emit({
        type: 'lost',
        name: this.name,
        label: this.settings.label,
        fencingToken: this.fencingToken,
        heldMs: now() - this.acquiredAt,
        reason: detail,
      });
    this.controller?.abort(reason);
  }

  /** The store confirmed a lease of `ms` that started at `started` (before the call). */
  private setLease(started: number, ms: number): void {
    this.leaseEnd = started + ms;
    this.heldUntil = this.leaseEnd - leaseDrift(ms);
  }

  /** Asks for the next call: the next renewal, or the end of the lease (less its margin), whichever comes first. */
  private schedule(t = now()): void {
    if (this.state !== 'held') return; // release() and lose() already left the list
    let at = this.heldUntil;
    if (this.settings.renew && !this.renewing) {
      // Every third of the ttl, and before a shorter lease (a hand-off not renewed yet) is half gone.
      // (moved a little earlier, onto a grid of ticks, when the store renews many locks in one call)
      const due = Math.min(t + this.settings.ttl / 3, t + (this.leaseEnd - t) / 2);
      if (this.renewalCap() > t) at = Math.min(at, this.ctx.renewals.at(t, due, this.settings.ttl));
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
    if (t >= this.heldUntil) {
      this.leaseRanOut(t);
      return;
    }
    if (this.settings.renew && !this.renewing && this.renewalCap() > t) {
      this.renew();
    }
    this.schedule();
  }

  /**
   * The lease is over at `t` (less its margin): lost, saying why, and, when seen past the store's lease end, that the
   * process did not run when it ended and how long after that end (measured from the end itself, not from the margin).
   */
  private leaseRanOut(t: number): void {
    const detail = this.capped
      ? lostDetails.maxHold(this.settings.maxHold)
      : this.renewing
        ? lostDetails.renewalUnreachable(this.settings.ttl)
        : this.settings.renew
          ? lostDetails.notRenewedInTime(this.settings.ttl)
          : lostDetails.renewOff(this.settings.ttl);
    this.lose(t >= this.leaseEnd ? lostDetails.notRunning(detail, Math.round(t - this.leaseEnd)) : detail);
  }

  private renew(): void {
    this.renewing = true;
    const started = now();
    const ttl = Math.max(1, Math.min(this.settings.ttl, Math.floor(this.renewalCap() - started)));
    if (ttl < this.settings.ttl) this.capped = true;
    // (a callback, not an await: thousands of locks may wait on one batch, and a suspended async call costs heap)
    this.ctx.renewals.renew(this.key, this.owner, ttl, (answer) => this.renewed(answer, started, ttl));
  }

  /** The store's answer to {@link renew}: extended, not ours any more, or the store's failure. */
  private renewed(answer: boolean | Error, started: number, ttl: number): void {
    this.renewing = false;
    if (this.state !== 'held') return;
    if (answer instanceof Error) {
      if (this.ctx.observed)
        this.ctx.emit({ type: 'store-error', name: this.name, operation: 'extend', error: answer });
      this.ctx.logStoreFailure('warn', answer, renewFailedLog(this.name, answer.message));
      this.schedule();
      return;
    }
    if (!answer) {
      this.lose(lostDetails.takenOver);
      return;
    }
    this.setLease(started, ttl);
    if (this.ctx.observed) this.ctx.emit({ type: 'extended', name: this.name, fencingToken: this.fencingToken, ttl });
    this.schedule();
  }
}
