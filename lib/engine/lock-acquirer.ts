import { FENCE_BLOCK, LockCohort, type CohortHost, type HandOff } from './lock-cohort.js';
import { HeldLock, type HeldLockContext } from './held-lock.js';
import { acquireError } from './acquire-error.js';
import { LocalWaiter, primitiveRequest, waitLocally, type LockRequest } from './local-waiter.js';
import { PermitCohort, type PermitCohortHost, type PermitTurn } from './permit-cohort.js';
import { transferPermit } from './permit-transfer.js';
import { LockError } from '../errors/lock.errors.js';
import { closedWhileWaitingMessage, grantedAfterCloseMessage, requestedAfterCloseMessage } from '../errors/lock.messages.js';
import { isThenable, type LockGrant, type MaybePromise } from '../contract/lock-provider.js';
import { ownerTokenFor, type InstanceOwnerTokens } from '../shared/owner-token.js';
import { now } from '../shared/clock.js';

type Cohort = Plain | Permits;
type Plain = LockCohort<LocalWaiter, HeldLock>;
type Permits = PermitCohort<LocalWaiter, HeldLock>;

/** Longest wait of `close()` for tries in flight, in ms. */
const CLOSE_DRAIN_MS = 10_000;

/** A lock that a waiter of this process got after queueing here: it waited. */
const queuedHere = (lock: HeldLock | null): HeldLock | null => {
  if (lock) lock.queued = true;
  return lock;
};

/**
 * Takes locks for one manager: asks the store, or, for a key that a caller
 * of this process already holds or waits for at the store, queues the
 * caller here behind it (the local hand-off, see docs/engine.md). @internal
 */
export class LockAcquirer {
  /** Per key, the callers of this process; `undefined` when the hand-off is off or the store reserves no fencing tokens. */
  private readonly cohorts: Map<string, Plain> | undefined;
  /** Per semaphore key, the callers of this process; `undefined` when the hand-off is off or the store cannot hand a permit over. */
  private readonly permits: Map<string, Permits> | undefined;
  /** Arrival counter of local waiters: a store grant's batch is the waiters that came before it. */
  private arrivals = 0;
  private readonly cohortHost: CohortHost<LocalWaiter, HeldLock>;
  private readonly permitHost: PermitCohortHost<LocalWaiter, HeldLock>;
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
    this.permits = localHandOff && typeof ctx.provider.transfer === 'function' ? new Map() : undefined;
    this.permitHost = {
      transfer: (waiter, from, cohort, turn) => this.transfer(waiter, from, cohort, turn),
      toStore: (waiter, cohort) => this.sendToStore(waiter, cohort),
      idle: (cohort) => {
        if (this.permits?.get(cohort.key) === cohort) this.permits.delete(cohort.key);
      },
    };
  }

  /** `true` once {@link close} was called. */
  get closing(): boolean {
    return this.closed;
  }

  /** Callers of this process queued here for `key` (for inspection). */
  localWaiters(key: string): number {
    return (this.cohorts?.get(key)?.line.waiting.length ?? 0) + (this.permits?.get(key)?.line.waiting.length ?? 0);
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
    const cohort = this.cohortOf(req);
    if (cohort?.busy) {
      if (req.wait) return this.waitHere(cohort, req).then(then);
      // Held here, on a lease this process counts: "held" is the answer, without the store.
      if (cohort.holds) return then(null);
    } else if (cohort && req.wait) {
      cohort.toStore();
      return this.ask(req, then, cohort);
    }
    return this.ask(req, then, undefined);
  }

  /**
   * Takes the plain locks of `reqs` (the names of one call) in one store call
   * (`acquireMany`), each then the lock a single grant makes; `null` when the
   * store could not take them all at once (nothing held). `undefined` when
   * this path does not serve them: no `acquireMany`, a semaphore or shared
   * request, or a caller of this process holds or queues for one of the keys
   * (the one-by-one path then keeps the local order).
   */
  takeMany(reqs: readonly LockRequest[]): MaybePromise<HeldLock[] | null> | undefined {
    const provider = this.ctx.provider;
    if (provider.acquireMany === undefined || this.closed || reqs.length < 2) return undefined;
    const cohorts = this.cohorts;
    if (reqs.some(({ key, options: o }) => o.limit !== undefined || o.mode !== undefined || cohorts?.get(key)?.busy)) return undefined;
    const owners = reqs.map((req) => this.ownerFor(req));
    const name = reqs.map((req) => req.name).join(',');
    // A wait counts at the store in each key's cohort, as a single wait does: callers of this process that come meanwhile queue here.
    const atStore = reqs[0].wait && cohorts ? reqs.map((req) => this.cohortFor(cohorts, req.key)) : undefined;
    atStore?.forEach((cohort) => cohort.toStore());
    const failed = (err: unknown): Error => (atStore?.forEach((cohort) => cohort.fromStore(true)), this.acquireFailed(name, err));
    let grants: MaybePromise<LockGrant[] | null>;
    try {
      // A wait's grants reserve blocks for the callers of this process that come next, as a single wait's do.
      grants = provider.acquireMany(reqs.map((req, i) => ({ key: req.key, owner: owners[i], ttl: req.options.ttl, fences: atStore && FENCE_BLOCK })));
    } catch (err) {
      throw failed(err);
    }
    const locks = (g: LockGrant[] | null): MaybePromise<HeldLock[] | null> => {
      if (!g) {
        atStore?.forEach((cohort) => cohort.fromStore(false));
        return null;
      }
      const each = reqs.map((req, i) => this.granted(req, owners[i], g[i], atStore?.[i]) as MaybePromise<HeldLock>);
      // (closed meanwhile: each lock is being released and its promise rejects)
      return each.some(isThenable) ? Promise.all(each) : (each as HeldLock[]);
    };
    if (!isThenable(grants)) return locks(grants);
    this.tries++;
    return grants.then(
      (g) => (this.triedOne(), locks(g)),
      (err: unknown) => {
        throw (this.triedOne(), failed(err));
      },
    );
  }

  /**
   * The callers of this process for the request's key when the local
   * hand-off serves it (created for a waiter): plain locks, and semaphores
   * of one limit on a store that hands permits over; a shared lock's
   * callers all go to the store.
   */
  private cohortOf(req: LockRequest): Cohort | undefined {
    const { limit, mode } = req.options;
    if (mode !== undefined) return undefined;
    if (limit === undefined) return this.cohorts && (req.wait ? this.cohortFor(this.cohorts, req.key) : this.cohorts.get(req.key));
    let permits = this.permits?.get(req.key);
    if (!permits && req.wait && this.permits) this.permits.set(req.key, (permits = new PermitCohort(req.key, limit, this.permitHost)));
    return permits?.limit === limit ? permits : undefined;
  }

  /**
   * Refuses new locks, fails the waiters queued here, and waits (bounded)
   * for tries in flight to finish and release what they got.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const cohort of [...(this.cohorts?.values() ?? []), ...(this.permits?.values() ?? [])]) {
      for (const waiter of [...cohort.line.waiting]) {
        cohort.line.remove(waiter);
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
    const owner = this.ownerFor(req);
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
              renews: o.renew,
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

  /** The cohort of `key`, made when there is none. */
  private cohortFor(cohorts: Map<string, Plain>, key: string): Plain {
    let cohort = cohorts.get(key);
    if (!cohort) cohorts.set(key, (cohort = new LockCohort(key, this.cohortHost)));
    return cohort;
  }

  /** A new owner token for a request: naming its `instanceId` when it has one, else the manager's. */
  private ownerFor({ options: o }: LockRequest): string {
    return o.instanceId !== undefined ? ownerTokenFor(o.instanceId) : this.namedTokens.next();
  }

  /** Queues a waiter behind this process's own holder or store waiter for the key. */
  private waitHere(cohort: Cohort, req: LockRequest): Promise<HeldLock | null> {
    return waitLocally(cohort.line, req, this.arrivals++);
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
    held.continueLease(from);
    held.cohort = cohort;
    cohort.hold(held);
    waiter.settle(held);
    return true;
  }

  /** A local hand-off of a permit (see {@link transferPermit}). */
  private transfer(waiter: LocalWaiter, from: HeldLock, cohort: Permits, turn: PermitTurn): void {
    const o = waiter.request.options;
    const owner = o.instanceId !== undefined ? ownerTokenFor(o.instanceId) : this.namedTokens.next();
    transferPermit(this.ctx, { waiter, from, cohort, turn, owner }, (req, grant) => this.granted(req, owner, grant));
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
      if (atStore instanceof PermitCohort) {
        lock.cohort = atStore;
        atStore.granted(lock, this.arrivals);
      } else if (this.cohorts && fences > 1 && o.limit === undefined && o.mode === undefined) {
        const cohort = atStore ?? this.cohortFor(this.cohorts, req.key);
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

  private acquireFailed(name: string, err: unknown): Error {
    return acquireError(this.ctx, name, err);
  }
}
