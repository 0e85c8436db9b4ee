import type { HeldLock, HeldLockContext } from './held-lock.js';
import type { LocalWaiter, LockRequest } from './local-waiter.js';
import type { PermitCohort, PermitTurn } from './permit-cohort.js';
import { isThenable, type LockGrant, type MaybePromise } from '../contract/lock-provider.js';
import { now } from '../shared/clock.js';

/** One local hand-off of a permit: who gives it, who takes it, under which owner token. @internal */
export interface PermitTransfer {
  readonly waiter: LocalWaiter;
  readonly from: HeldLock;
  readonly cohort: PermitCohort<LocalWaiter, HeldLock>;
  readonly turn: PermitTurn;
  /** The new holder's owner token. */
  readonly owner: string;
}

/**
 * A local hand-off of a permit (docs/engine.md, "Local hand-off"): the
 * waiter takes over the permit `from` held, by one store call
 * (`LockProvider.transfer`) that names the new owner and draws a fresh
 * fencing token. When the store no longer had the permit, the waiter queues
 * there; when the store failed, the permit goes back (best effort) and the
 * waiter queues there on its own. `grant` builds the lock of a grant.
 * @internal
 */
export function transferPermit(
  ctx: HeldLockContext,
  { waiter, from, cohort, turn, owner }: PermitTransfer,
  grant: (req: LockRequest, grant: LockGrant) => MaybePromise<HeldLock | null>,
): void {
  waiter.done();
  const req = waiter.request;
  const started = now();
  const moved = (g: LockGrant | null): void => {
    if (!g) return cohort.missed(waiter);
    let lock: MaybePromise<HeldLock | null>;
    try {
      lock = grant(req, { fencingToken: g.fencingToken, queued: true, leaseStartedAt: started, leaseMs: g.leaseMs });
    } catch (err) {
      cohort.moved();
      return waiter.fail(err);
    }
    if (isThenable(lock)) {
      // The manager closed meanwhile: the grant went back.
      cohort.moved();
      return void lock.then(waiter.settle, waiter.fail);
    }
    const held = lock as HeldLock;
    held.cohort = cohort;
    cohort.moved(held, turn);
    waiter.settle(held);
  };
  const failed = (err: unknown): void => {
    const error = err instanceof Error ? err : new Error(String(err));
    if (ctx.observed) ctx.emit({ type: 'store-error', name: req.name, operation: 'acquire', error });
    // Owner-checked: frees the permit sooner than its lease would, if the store still has it.
    void Promise.resolve()
      .then(() => ctx.provider.release(req.key, from.owner))
      .catch(() => undefined);
    cohort.missed(waiter);
  };
  try {
    const g = ctx.provider.transfer!(req.key, from.owner, owner, req.options.ttl);
    if (isThenable(g)) g.then(moved, failed);
    else moved(g);
  } catch (err) {
    failed(err);
  }
}
