import type { CohortWaiter } from './lock-cohort.js';
import type { HandOffGrant, HandOffRequest } from './hand-off-grant.js';

/** A caller waiting in this process, behind this process's own holder or store waiter for the same key. @internal */
export class LocalWaiter implements CohortWaiter {
  timer: ReturnType<typeof setTimeout> | undefined;
  onAbort: (() => void) | undefined;

  constructor(
    /** Arrival order within the manager. */
    readonly seq: number,
    readonly request: HandOffRequest,
    readonly settle: (grant: HandOffGrant | null) => void,
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

/** The local queue a waiter joins: a cohort's line. @internal */
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
export function waitLocally(queue: LocalQueue, req: HandOffRequest, seq: number): Promise<HandOffGrant | null> {
  const o = req.options;
  return new Promise<HandOffGrant | null>((resolve, reject) => {
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
