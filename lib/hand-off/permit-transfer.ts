import type { HandOffEvents } from './acquire-error.js';
import { LocalHold } from './hand-off-grant.js';
import type { LocalWaiter } from './local-waiter.js';
import type { PermitCohort, PermitTurn } from './permit-cohort.js';
import type { LockGrant, LockProvider } from '../contract/lock-provider.js';
import { andThen, type MaybePromise } from '../contract/maybe-promise.js';
import { now } from '../shared/clock.js';

/** One local hand-off of a permit: who gives it, who takes it, and the turn it goes on with. @internal */
export interface PermitTransfer {
  readonly waiter: LocalWaiter;
  readonly from: LocalHold;
  readonly cohort: PermitCohort<LocalWaiter, LocalHold>;
  readonly turn: PermitTurn;
}

/**
 * A local hand-off of a permit (docs/engine.md, "Local hand-off"): the
 * waiter takes over the permit `from` held, by one store call
 * (`LockProviderCapabilities.transfer`) that names the new owner (the
 * waiter's request's) and draws a fresh fencing token, and is settled with
 * that grant. When the store no longer had the permit, or failed (the permit
 * then goes back, best effort), answers the waiter: it goes to queue at the
 * store on its own. @internal
 */
export function transferPermit(
  provider: LockProvider,
  events: HandOffEvents,
  { waiter, from, cohort, turn }: PermitTransfer,
): MaybePromise<LocalWaiter | undefined> {
  waiter.done();
  const req = waiter.request;
  const started = now();
  const moved = (g: LockGrant | null): LocalWaiter | undefined => {
    if (!g) {
      cohort.missed();
      return waiter;
    }
    const hold = new LocalHold(cohort, req.owner);
    cohort.moved(hold, turn);
    waiter.settle({ fencingToken: g.fencingToken, queued: true, leaseStartedAt: started, leaseMs: g.leaseMs, hold });
    return undefined;
  };
  const failed = (err: unknown): LocalWaiter => {
    const error = err instanceof Error ? err : new Error(String(err));
    if (events.observed) events.emit({ type: 'store-error', name: req.name, operation: 'acquire', error });
    // Owner-checked: frees the permit sooner than its lease would, if the store still has it.
    void Promise.resolve()
      .then(() => provider.release(req.key, from.owner))
      .catch(() => undefined);
    cohort.missed();
    return waiter;
  };
  try {
    const g = provider.transfer!(req.key, from.owner, req.owner, req.options.ttl);
    return andThen(g, moved, failed);
  } catch (err) {
    return failed(err);
  }
}
