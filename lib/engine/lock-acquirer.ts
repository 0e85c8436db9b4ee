import { FENCE_BLOCK, LockCohort, type CohortHost, type HandOff } from './lock-cohort.js';
import { HeldLock, type HeldLockContext } from './held-lock.js';
import { LocalWaiter, type LockRequest } from './local-waiter.js';
import { LockError, LockStoreError } from '../errors/lock.errors.js';
import { closedWhileWaitingMessage, grantedAfterCloseMessage, requestedAfterCloseMessage } from '../errors/lock.messages.js';
import { isThenable, type LockAcquireRequest, type LockGrant, type MaybePromise } from '../contract/lock-provider.js';
import { ownerTokenFor, type InstanceOwnerTokens } from '../shared/owner-token.js';
import { now } from '../shared/clock.js';

type Cohort = LockCohort<LocalWaiter, HeldLock>;

/** Longest wait of `close()` for tries in flight, in ms. */
const CLOSE_DRAIN_MS = 10_000;

/** A lock that a waiter of this process got after queueing here: it waited. */
const queuedHere = (lock: HeldLock | null): HeldLock | null => {
  if (lock) lock.queued = true;
  return lock;
};

/** The store request of a semaphore or a shared lock: `limit` only above 1, `mode` only when shared, never `fences`. */
function primitiveRequest({ key, wait, options: o }: LockRequest, owner: string): LockAcquireRequest {
  const request: { -readonly [K in keyof LockAcquireRequest]: LockAcquireRequest[K] } = {
    key,
    owner,
    ttl: o.ttl,
    wait,
    waitTimeout: o.waitTimeout,
    signal: o.signal,
  };
  if (o.limit !== undefined) request.limit = o.limit;
  if (o.mode !== undefined) request.mode = o.mode;
  return request;
}

/**
 * Takes locks for one manager: asks the store, or, for a key that a caller
 * of this process already holds or waits for at the store, queues the
 * caller here behind it (the local hand-off, see docs/engine.md). @internal
 */
export class LockAcquirer {
  /** Per key, the callers of this process; `undefined` when the hand-off is off or the store reserves no fencing tokens. */
  private readonly cohorts: Map<string, Cohort> | undefined;
  /** Arrival counter of local waiters: a store grant's batch is the waiters that came before it. */
  private arrivals = 0;
  private readonly cohortHost: CohortHost<LocalWaiter, HeldLock>;
  private closed = false;
  /** Tries (no waiting) whose store call is in flight: `close()` lets them finish and release what they got. */
  private tries = 0;
  private drained: (() => void) | undefined;

  constructor(
    private readonly ctx: HeldLockContext,
    /** Owner tokens that name the manager's `instanceId`. */
    private readonly namedTokens: InstanceOwnerTokens,
    localHandOff: boolean,
  ) {
    this.cohorts = localHandOff && ctx.provider.fenceBlocks === true ? new Map() : undefined;
    this.cohortHost = {
      handTo: (waiter, handOff) => this.handTo(waiter, handOff),
      toStore: (waiter, cohort) => this.sendToStore(waiter, cohort),
      idle: (cohort) => {
        if (this.cohorts?.get(cohort.key) === cohort) this.cohorts.delete(cohort.key);
      },
    };
  }

  /** `true` once {@link close} was called. */
  get closing(): boolean {
    return this.closed;
  }

  /** Callers of this process queued here for `key` (for inspection). */
  localWaiters(key: string): number {
    return this.cohorts?.get(key)?.waiting.length ?? 0;
  }

  /**
   * Takes the lock; `then` maps the lock (or `null`: held) within the same
   * promise turn. A waiter for a key this process holds or waits for queues
   * here; a try answers "held" at once while a caller of this process holds it.
   */
  take<R>(req: LockRequest, then: (lock: HeldLock | null) => R): MaybePromise<R> {
    if (this.closed) {
      throw new LockError(requestedAfterCloseMessage(req.name), { lockName: req.name });
    }
    // Local hand-off for plain locks only: a semaphore's or a shared lock's callers all go to the store.
    const cohorts = req.options.limit === undefined && req.options.mode === undefined ? this.cohorts : undefined;
    if (cohorts !== undefined) {
      let cohort = cohorts.get(req.key);
      if (cohort?.busy) {
        if (req.wait) return this.waitHere(cohort, req).then(then);
        // Held here, on a lease this process counts: "held" is the answer, without the store.
        if (cohort.holds) return then(null);
      } else if (req.wait) {
        if (!cohort) cohorts.set(req.key, (cohort = new LockCohort(req.key, this.cohortHost)));
        cohort.toStore();
        return this.ask(req, then, cohort);
      }
    }
    return this.ask(req, then, undefined);
  }

  /**
   * Refuses new locks, fails the waiters queued here, and waits (bounded)
   * for tries in flight to finish and release what they got.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const cohort of this.cohorts?.values() ?? []) {
      for (const waiter of [...cohort.waiting]) {
        cohort.remove(waiter);
        waiter.done();
        waiter.fail(new LockError(closedWhileWaitingMessage(waiter.request.name), { lockName: waiter.request.name }));
      }
    }
    if (this.tries > 0) {
      // Bounded: the built-in stores answer within their command timeout; a store that never answers must not hang shutdown.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        timer = setTimeout(resolve, CLOSE_DRAIN_MS);
        timer.unref?.();
      });
      clearTimeout(timer);
      this.drained = undefined;
    }
  }

  /** Asks the store. `cohort`: the caller is this process's one at the store for the key, and reports back to it. */
  private ask<R>(req: LockRequest, then: (lock: HeldLock | null) => R, cohort: Cohort | undefined): MaybePromise<R> {
    const o = req.options;
    const owner = o.instanceId !== undefined ? ownerTokenFor(o.instanceId) : this.namedTokens.next();
    const plain = o.limit === undefined && o.mode === undefined;
    let grant: MaybePromise<LockGrant | null>;
    try {
      grant = this.ctx.provider.acquire(
        plain
          ? {
              key: req.key,
              owner,
              ttl: o.ttl,
              wait: req.wait,
              waitTimeout: o.waitTimeout,
              signal: o.signal,
              // Waiters only: callers of this process queue behind a waiting caller's grant; a try's grant stays its own.
              fences: req.wait && this.cohorts ? FENCE_BLOCK : undefined,
            }
          : primitiveRequest(req, owner),
      );
    } catch (err) {
      cohort?.fromStore(true);
      throw this.acquireFailed(req.name, err);
    }
    if (!isThenable(grant)) {
      const lock = this.granted(req, owner, grant, cohort);
      return isThenable(lock) ? lock.then(then) : then(lock);
    }
    if (!req.wait) this.tries++;
    return grant.then(
      (g) => {
        if (!req.wait) this.triedOne();
        const lock = this.granted(req, owner, g, cohort);
        return isThenable(lock) ? lock.then(then) : then(lock);
      },
      (err: unknown) => {
        if (!req.wait) this.triedOne();
        cohort?.fromStore(true);
        throw this.acquireFailed(req.name, err);
      },
    );
  }

  /** Queues a waiter behind this process's own holder or store waiter for the key. */
  private waitHere(cohort: Cohort, req: LockRequest): Promise<HeldLock | null> {
    const o = req.options;
    return new Promise<HeldLock | null>((resolve, reject) => {
      // Already aborted, or no wait allowed: like a store asked to try once, the answer is "held".
      if (o.signal?.aborted || o.waitTimeout === 0) return resolve(null);
      const waiter = new LocalWaiter(this.arrivals++, req, resolve, reject);
      cohort.enqueue(waiter);
      const leave = (): void => {
        if (!cohort.remove(waiter)) return;
        waiter.done();
        resolve(null);
      };
      if (o.waitTimeout !== undefined) waiter.timer = setTimeout(leave, o.waitTimeout);
      if (o.signal) {
        waiter.onAbort = leave;
        o.signal.addEventListener('abort', leave, { once: true });
      }
    });
  }

  /** A local hand-off: `waiter` takes over the store's grant that `from` held, with a reserved fencing token. */
  private handTo(waiter: LocalWaiter, { from, fencingToken, leaseMs, cohort }: HandOff<LocalWaiter, HeldLock>): boolean {
    waiter.done();
    let lock: MaybePromise<HeldLock | null>;
    try {
      // The store's lease as it is: it ends when `from`'s did (leaseMs was measured a moment earlier).
      const t = now();
      lock = this.granted(waiter.request, from.owner, { fencingToken, queued: true, leaseStartedAt: t, leaseMs: Math.min(leaseMs, from.leaseEnd - t) });
    } catch (err) {
      waiter.fail(err);
      return false;
    }
    // Not closed (close() empties the local queues first), so the lock is there at once.
    const held = lock as HeldLock;
    held.cohort = cohort;
    cohort.hold(held);
    waiter.settle(held);
    return true;
  }

  /** A local waiter's turn to queue at the store (its process no longer holds the key), with what is left of its wait. */
  private sendToStore(waiter: LocalWaiter, cohort: Cohort): void {
    waiter.done();
    const req = waiter.request;
    const o = req.options;
    const options = o.waitTimeout === undefined ? o : { ...o, waitTimeout: Math.max(0, o.waitTimeout - (now() - req.requestedAt)) };
    try {
      const lock = this.ask(options === o ? req : { ...req, options }, queuedHere, cohort);
      if (isThenable(lock)) lock.then(waiter.settle, waiter.fail);
      else waiter.settle(lock);
    } catch (err) {
      waiter.fail(err);
    }
  }

  private triedOne(): void {
    if (--this.tries === 0 && this.drained) {
      // Let the late grant's release (in granted()) start before close() goes on.
      const drained = this.drained;
      this.drained = undefined;
      queueMicrotask(drained);
    }
  }

  /**
   * The lock for a grant (`null`: none). A store grant with reserved fencing
   * tokens makes the lock its cohort's holder; a caller counted at the store
   * (`atStore`) reports back to its cohort.
   */
  private granted(req: LockRequest, owner: string, grant: LockGrant | null, atStore?: Cohort): MaybePromise<HeldLock | null> {
    try {
      if (!grant) return null;
      const o = req.options;
      const lock = new HeldLock(
        {
          name: req.name,
          key: req.key,
          owner,
          fencingToken: grant.fencingToken,
          leaseStartedAt: grant.leaseStartedAt ?? req.requestedAt,
          leaseMs: grant.leaseMs ?? o.ttl,
          settings: o,
          parentScope: req.scope,
        },
        this.ctx,
      );
      if (grant.queued) lock.queued = true;
      if (this.closed) {
        return lock.release().then(() => {
          throw new LockError(grantedAfterCloseMessage(req.name), { lockName: req.name });
        });
      }
      const fences = grant.fences ?? 1;
      if (this.cohorts && fences > 1 && o.limit === undefined && o.mode === undefined) {
        let cohort = atStore ?? this.cohorts.get(req.key);
        if (!cohort) this.cohorts.set(req.key, (cohort = new LockCohort(req.key, this.cohortHost)));
        lock.cohort = cohort;
        cohort.hold(lock, { fencingToken: grant.fencingToken, fences, arrivals: this.arrivals });
      }
      if (grant.queued && this.ctx.observed) this.ctx.emit({ type: 'contended', name: req.name, onHeld: o.onHeld });
      if (this.ctx.observed)
        this.ctx.emit({ type: 'acquired', name: req.name, label: o.label, fencingToken: grant.fencingToken, waitMs: now() - req.requestedAt });
      return lock;
    } finally {
      atStore?.fromStore(false);
    }
  }

  /** The error a caller gets for a failed acquire. Providers see keys, not names: put the lock name in. */
  private acquireFailed(name: string, err: unknown): Error {
    const error =
      err instanceof LockStoreError && err.lockName === undefined
        ? new LockStoreError(err.operation, err.detail, { lockName: name, cause: err.cause ?? err })
        : err instanceof LockError
          ? err
          : new LockStoreError('acquire', err instanceof Error ? err.message : String(err), { lockName: name, cause: err });
    this.ctx.emit({ type: 'store-error', name, operation: 'acquire', error });
    return error;
  }
}
