import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import { now } from '../../shared/clock.js';

/** What an acquire script call is for: a lock key, its owner and lease, and the kind of hold. @internal */
export interface AcquireTarget {
  readonly key: string;
  readonly owner: string;
  readonly ttl: number;
  /** Fencing tokens its grant reserves (a plain lock). */
  readonly fences: number;
  /** A shared or semaphore hold's kind (`'s'`, `'x<L>'`), see `groupKind`; `undefined` for a plain lock. */
  readonly kind: string | undefined;
}

/** A local caller waiting in a Redis queue. @internal */
export interface Waiter extends AcquireTarget {
  /** The engine renews its lease ({@link LockAcquireRequest.renews}): a hand-off's short lease is enough. */
  readonly renews: boolean;
  readonly resolve: (grant: LockGrant | null) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  /** The script call in flight for this waiter, if any. */
  inflight?: Promise<unknown>;
  /** A grant notice arrived while a call was in flight: check again after it. */
  again: boolean;
  /** The next call is the first (queueing) one: a grant from it is not a hand-off. */
  first: boolean;
  /**
   * The send time of the latest call that Redis answered "not yet" (or of the
   * first call): no later than any hand-off to this waiter, so a hand-off's
   * lease is counted from it.
   */
  safeStart?: number;
  timer?: ReturnType<typeof setTimeout>;
  deadline?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** `request` with what is left of its wait since `started`; `null` when it was aborted or its time is up. @internal */
export function rest(request: LockAcquireRequest, started: number): LockAcquireRequest | null {
  if (request.signal?.aborted) return null;
  if (request.waitTimeout === undefined) return request;
  const left = request.waitTimeout - (now() - started);
  return left > 0 ? { ...request, waitTimeout: left } : null;
}
