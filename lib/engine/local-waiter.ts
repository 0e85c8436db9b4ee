import type { CohortWaiter } from './lock-cohort.js';
import type { HeldLock } from './held-lock.js';
import type { LockScope } from './lock-context.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';

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
