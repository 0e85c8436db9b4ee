import type { CohortWaiter } from './lock-cohort.js';
import type { HeldLock } from './held-lock.js';
import type { LockScope } from './lock-context.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';
import type { LockAcquireRequest } from '../contract/lock-provider.js';

/** One call's request for a lock. @internal */
export interface LockRequest {
  readonly name: string;
  /** The store key (prefix included). */
  readonly key: string;
  readonly options: ResolvedCallOptions;
  /** Queue for the lock (else try once). */
  readonly wait: boolean;
  /** The lock scope the call runs in (a scoped call), as the new lock's parent. */
  readonly scope: LockScope | undefined;
  /** When the call asked (performance.now() time): the earliest the store's lease can have started. */
  readonly requestedAt: number;
}

/** A caller waiting in this process, behind this process's own holder or store waiter for the same key. @internal */
export class LocalWaiter implements CohortWaiter {
  timer: ReturnType<typeof setTimeout> | undefined;
  onAbort: (() => void) | undefined;

  constructor(
    /** Arrival order within the manager. */
    readonly seq: number,
    readonly request: LockRequest,
    readonly settle: (lock: HeldLock | null) => void,
    readonly fail: (error: unknown) => void,
  ) {}

  get ttl(): number {
    return this.request.options.ttl;
  }

  get renew(): boolean {
    return this.request.options.renew;
  }

  /** Stops its own timeout and abort listener (it left the local queue). */
  done(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.onAbort) this.request.options.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** The local queue a waiter joins: a cohort. @internal */
export interface LocalQueue {
  enqueue(waiter: LocalWaiter): void;
  /** Takes the waiter out; `false` when it was no longer queued (served meanwhile). */
  remove(waiter: LocalWaiter): boolean;
}

/**
 * Queues a caller in `queue` (behind this process's own holder or store
 * waiter for the key) until served, or `null` at its `waitTimeout` or abort.
 * `seq`: its arrival order. @internal
 */
export function waitLocally(queue: LocalQueue, req: LockRequest, seq: number): Promise<HeldLock | null> {
  const o = req.options;
  return new Promise<HeldLock | null>((resolve, reject) => {
    // Already aborted, or no wait allowed: like a store asked to try once, the answer is "held".
    if (o.signal?.aborted || o.waitTimeout === 0) return resolve(null);
    const waiter = new LocalWaiter(seq, req, resolve, reject);
    queue.enqueue(waiter);
    const leave = (): void => {
      if (!queue.remove(waiter)) return;
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

/** The store request of a semaphore or a shared lock: `limit` only above 1, `mode` only when shared, never `fences`; `renews` as for a plain lock. @internal */
export function primitiveRequest({ key, wait, options: o }: LockRequest, owner: string): LockAcquireRequest {
  const request: { -readonly [K in keyof LockAcquireRequest]: LockAcquireRequest[K] } = {
    key,
    owner,
    ttl: o.ttl,
    wait,
    waitTimeout: o.waitTimeout,
    signal: o.signal,
    renews: o.renew,
  };
  if (o.limit !== undefined) request.limit = o.limit;
  if (o.mode !== undefined) request.mode = o.mode;
  return request;
}
