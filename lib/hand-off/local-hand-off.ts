import { FENCE_BLOCK, LockCohort } from './lock-cohort.js';
import { PermitCohort } from './permit-cohort.js';
import { LocalHold, type HandOffGrant, type HandOffLease, type HandOffRequest } from './hand-off-grant.js';
import { waitLocally, type LocalWaiter } from './local-waiter.js';
import { transferPermit } from './permit-transfer.js';
import { acquireError, type HandOffEvents } from './acquire-error.js';
import { storeRequest } from './store-request.js';
import { LockError } from '../errors/lock.errors.js';
import { closedWhileWaitingMessage } from '../errors/lock.messages.js';
import type { LockGrant, LockProvider } from '../contract/lock-provider.js';
import { andThen, type MaybePromise } from '../contract/maybe-promise.js';
import { now } from '../shared/clock.js';

type Cohort = Plain | Permits;
type Plain = LockCohort<LocalWaiter, LocalHold>;
type Permits = PermitCohort<LocalWaiter, LocalHold>;

/**
 * The local hand-off (docs/engine.md, "Local hand-off"): wraps the store and
 * serves the callers of this process. A caller for a key that another caller
 * of this process holds or waits for at the store queues here behind it and
 * is handed the lock on release (a plain lock, within the block of fencing
 * tokens its store grant reserved) or the permit (a semaphore, by the
 * store's `transfer`); the others ask the store. It answers grants; the
 * engine makes the locks, and gives each grant's {@link LocalHold} back on
 * release or loss. Store failures are thrown (or rejected) as the caller's
 * error, naming the lock. @internal
 */
export class LocalHandOff {
  /** Per key, the callers of this process; `undefined` when the hand-off is off or the store reserves no fencing tokens. */
  private readonly cohorts: Map<string, Plain> | undefined;
  /** Per semaphore key, the callers of this process; `undefined` when the hand-off is off or the store cannot hand a permit over. */
  private readonly permits: Map<string, Permits> | undefined;
  /** Arrival counter of local waiters: a store grant's batch is the waiters that came before it. */
  private arrivals = 0;

  constructor(
    private readonly provider: LockProvider,
    private readonly events: HandOffEvents,
    /** The manager's `localHandOff` option. */
    enabled: boolean,
  ) {
    this.cohorts = enabled && provider.fenceBlocks === true ? new Map() : undefined;
    this.permits = enabled && typeof provider.transfer === 'function' ? new Map() : undefined;
  }

  /** Callers of this process queued here for `key` (for inspection). */
  localWaiters(key: string): number {
    return (this.cohorts?.get(key)?.line.waiting.length ?? 0) + (this.permits?.get(key)?.line.waiting.length ?? 0);
  }

  /**
   * `next` of the grant for `req`, or of `null` (held), in the same promise
   * turn as the store's answer (one `then` per acquisition); `failed` gets
   * the store's failure as the caller's error (by default thrown on). A waiter
   * for a key this process holds or waits for queues here; a try answers
   * "held" at once while a caller of this process holds it.
   */
  acquire<R>(
    req: HandOffRequest,
    next: (grant: HandOffGrant | null) => MaybePromise<R>,
    failed: (err: Error) => MaybePromise<R> = rethrow,
  ): MaybePromise<R> {
    const cohort = this.cohortOf(req);
    if (cohort?.busy) {
      if (req.wait) return andThen(waitLocally(cohort.line, req, this.arrivals++), next);
      // Held here, on a lease this process counts: "held" is the answer, without the store.
      if (cohort.holds) return next(null);
    } else if (cohort && req.wait) {
      cohort.toStore();
      return this.ask(req, cohort, next, failed);
    }
    return this.ask(req, undefined, next, failed);
  }

  /**
   * The plain locks of `reqs` (the names of one call) in one store call
   * (`acquireMany`); `null` when the store could not take them all at once
   * (nothing held). `undefined` when this path does not serve them: no
   * `acquireMany`, a semaphore or shared request, or a caller of this process
   * holds or queues for one of the keys (the one-by-one path then keeps the
   * local order).
   */
  acquireMany(reqs: readonly HandOffRequest[]): MaybePromise<HandOffGrant[] | null> | undefined {
    const provider = this.provider;
    if (provider.acquireMany === undefined || reqs.length < 2) return undefined;
    const cohorts = this.cohorts;
    if (reqs.some(({ key, options: o }) => o.limit !== undefined || o.mode !== undefined || cohorts?.get(key)?.busy))
      return undefined;
    // A wait counts at the store in each key's cohort, as a single wait does: callers of this process that come meanwhile queue here.
    const atStore = reqs[0].wait && cohorts ? reqs.map((req) => this.cohortFor(cohorts, req.key)) : undefined;
    atStore?.forEach((cohort) => cohort.toStore());
    const failed = (err: unknown): Error => {
      atStore?.forEach((cohort) => this.fromStore(cohort, true));
      return acquireError(this.events, reqs.map((req) => req.name).join(','), err);
    };
    let grants: MaybePromise<LockGrant[] | null>;
    try {
      // A wait's grants reserve blocks for the callers of this process that come next, as a single wait's do.
      grants = provider.acquireMany(
        reqs.map((req) => ({ key: req.key, owner: req.owner, ttl: req.options.ttl, fences: atStore && FENCE_BLOCK })),
      );
    } catch (err) {
      throw failed(err);
    }
    const each = (g: LockGrant[] | null): HandOffGrant[] | null => {
      if (g) return reqs.map((req, i) => this.granted(req, g[i], atStore?.[i])!);
      atStore?.forEach((cohort) => this.fromStore(cohort, false));
      return null;
    };
    return andThen(grants, each, (err: unknown) => {
      throw failed(err);
    });
  }

  /**
   * On release of a lock held by a caller of this process (`lease`: its
   * lease, at `t`): hands it to the next waiter here, without a store call
   * for a plain lock (`true`), or starts the store's transfer of a permit.
   * `false`: the lock is released at the store ({@link leave}).
   */
  handOver(hold: LocalHold, lease: HandOffLease, t: number): boolean {
    const cohort = hold.cohort as Cohort;
    const leaseLeftMs = lease.leaseEnd - t;
    if (cohort instanceof PermitCohort) {
      const next = cohort.handOver(hold, leaseLeftMs);
      if (next === undefined) return false;
      const missed = transferPermit(this.provider, this.events, {
        waiter: next.waiter,
        from: hold,
        cohort,
        turn: next.turn,
      });
      void andThen(missed, (waiter) => waiter && this.sendToStore(waiter, cohort));
      return true;
    }
    const next = cohort.handOver(hold, leaseLeftMs);
    if (next === undefined) return false;
    const { waiter, fencingToken } = next;
    waiter.done();
    const handed = new LocalHold(cohort, hold.owner);
    cohort.hold(handed);
    // The store's lease as it is: it ends when the holder's did (leaseLeftMs was measured a moment earlier).
    const at = now();
    const leaseMs = Math.min(leaseLeftMs, lease.leaseEnd - at);
    waiter.settle({
      fencingToken,
      queued: true,
      leaseStartedAt: at,
      leaseMs,
      owner: hold.owner,
      hold: handed,
      heldUntil: lease.heldUntil,
    });
    return true;
  }

  /**
   * Releases a lock at the store: `send` makes the store call (a release, or
   * `holdAtLeast`'s extend), then the next waiter of this process goes to
   * queue at the store behind it; with a waiter queued here both calls may
   * leave together (`LockProviderCapabilities.coalesce`).
   */
  leave<T>(hold: LocalHold, send: () => T): T {
    const run = (): T => {
      try {
        return send();
      } finally {
        this.left(hold);
      }
    };
    return hold.cohort.queued && this.provider.coalesce !== undefined ? this.provider.coalesce(run) : run();
  }

  /** The lock of `hold` no longer holds (released at the store, or lost): the next waiter of this process queues at the store. */
  left(hold: LocalHold): void {
    const cohort = hold.cohort as Cohort;
    const next = cohort.left(hold);
    if (next !== undefined) this.sendToStore(next, cohort);
    else if (cohort.idle) this.forget(cohort);
  }

  /** Fails the waiters queued here (the manager closes). */
  close(): void {
    for (const cohort of [...(this.cohorts?.values() ?? []), ...(this.permits?.values() ?? [])]) {
      for (const waiter of [...cohort.line.waiting]) {
        cohort.line.remove(waiter);
        waiter.done();
        waiter.fail(new LockError(closedWhileWaitingMessage(waiter.request.name), { lockName: waiter.request.name }));
      }
    }
  }

  /**
   * The callers of this process for the request's key when the local
   * hand-off serves it (created for a waiter): plain locks, and semaphores
   * of one limit on a store that hands permits over; a shared lock's
   * callers all go to the store.
   */
  private cohortOf(req: HandOffRequest): Cohort | undefined {
    const { limit, mode } = req.options;
    if (mode !== undefined) return undefined;
    if (limit === undefined)
      return this.cohorts && (req.wait ? this.cohortFor(this.cohorts, req.key) : this.cohorts.get(req.key));
    let permits = this.permits?.get(req.key);
    if (!permits && req.wait && this.permits) this.permits.set(req.key, (permits = new PermitCohort(req.key, limit)));
    return permits?.limit === limit ? permits : undefined;
  }

  /** The cohort of `key`, made when there is none. */
  private cohortFor(cohorts: Map<string, Plain>, key: string): Plain {
    let cohort = cohorts.get(key);
    if (!cohort) cohorts.set(key, (cohort = new LockCohort(key)));
    return cohort;
  }

  /**
   * Asks the store; `next` of its grant, `failed` of its failure (see
   * {@link acquire}). `cohort`: the caller is this process's one at the
   * store for the key, and reports back to it.
   */
  private ask<R>(
    req: HandOffRequest,
    cohort: Cohort | undefined,
    next: (grant: HandOffGrant | null) => MaybePromise<R>,
    failed: (err: Error) => MaybePromise<R>,
  ): MaybePromise<R> {
    let grant: MaybePromise<LockGrant | null>;
    try {
      // Waiters only: callers of this process queue behind a waiting caller's grant; a try's grant stays its own.
      grant = this.provider.acquire(storeRequest(req, req.wait && this.cohorts ? FENCE_BLOCK : undefined));
    } catch (err) {
      return failed(this.askFailed(req, cohort, err));
    }
    return andThen(
      grant,
      (g) => next(this.granted(req, g, cohort)),
      (err: unknown) => failed(this.askFailed(req, cohort, err)),
    );
  }

  /** The store failed the caller's acquisition: its cohort hears of it, and the caller gets the error naming its lock. */
  private askFailed(req: HandOffRequest, cohort: Cohort | undefined, err: unknown): Error {
    if (cohort) this.fromStore(cohort, true);
    return acquireError(this.events, req.name, err);
  }

  /**
   * The store's answer (`null`: none). A grant with reserved fencing tokens
   * makes its caller the holder of its cohort, a permit opens its turn; a
   * caller counted at the store (`atStore`) reports back to its cohort.
   */
  private granted(req: HandOffRequest, grant: LockGrant | null, atStore: Cohort | undefined): HandOffGrant | null {
    try {
      if (!grant) return null;
      const o = req.options;
      if (atStore instanceof PermitCohort) {
        const hold = new LocalHold(atStore, req.owner);
        atStore.granted(hold, this.arrivals);
        // (fields added before the spread: after it, Node 20 makes a new hidden class per object, which every reader then misses)
        return { hold, ...grant };
      }
      const fences = grant.fences ?? 1;
      if (this.cohorts && fences > 1 && o.limit === undefined && o.mode === undefined) {
        const cohort = atStore ?? this.cohortFor(this.cohorts, req.key);
        const hold = new LocalHold(cohort, req.owner);
        cohort.hold(hold, { fencingToken: grant.fencingToken, fences, arrivals: this.arrivals });
        return { hold, ...grant };
      }
      return grant;
    } finally {
      if (atStore) this.fromStore(atStore, false);
    }
  }

  /** A caller's store acquisition ended: the waiters that go to the store now are sent. */
  private fromStore(cohort: Cohort, failed: boolean): void {
    const sent = cohort.fromStore(failed);
    for (const waiter of sent) this.sendToStore(waiter, cohort);
    if (sent.length === 0 && cohort.idle) this.forget(cohort);
  }

  /** A local waiter's turn to queue at the store (its process no longer holds the key), with what is left of its wait. */
  private sendToStore(waiter: LocalWaiter, cohort: Cohort): void {
    waiter.done();
    const req = waiter.request;
    const o = req.options;
    const asked =
      o.waitTimeout === undefined
        ? req
        : { ...req, options: { ...o, waitTimeout: Math.max(0, o.waitTimeout - (now() - req.requestedAt)) } };
    try {
      void this.ask(asked, cohort, (g) => waiter.settle(queuedHere(g)), waiter.fail);
    } catch (err) {
      waiter.fail(err);
    }
  }

  /** The cohort has no holder, no caller at the store and no waiter: forget it. */
  private forget(cohort: Cohort): void {
    if (cohort instanceof PermitCohort) {
      if (this.permits?.get(cohort.key) === cohort) this.permits.delete(cohort.key);
    } else if (this.cohorts?.get(cohort.key) === cohort) {
      this.cohorts.delete(cohort.key);
    }
  }
}

/** The default of {@link LocalHandOff.acquire}'s `failed`: the error goes on to the caller. */
function rethrow(err: Error): never {
  throw err;
}

/** A grant a waiter of this process got after queueing here: it waited. */
function queuedHere(grant: HandOffGrant | null): HandOffGrant | null {
  return grant && { queuedHere: true, ...grant };
}
