import {
  LockProvider,
  LockStoreError,
  type LockAcquireRequest,
  type LockBatchRequest,
  type LockExtension,
  type LockGrant,
} from '../../lib/index.js';

/** An acquire call queued at the store behind the holder. */
interface Queued {
  readonly request: LockAcquireRequest;
  readonly answer: (grant: LockGrant | null) => void;
  readonly fail: (error: Error) => void;
  timer?: ReturnType<typeof setTimeout>;
  onAbort?: () => void;
}

/** An acquire call held back by {@link FakeLockProvider.pause}. */
interface Parked {
  readonly request: LockAcquireRequest;
  readonly resolve: (answer: Promise<LockGrant | null>) => void;
}

/**
 * A lock store in this process's memory, for engine tests. It behaves like a
 * shared store reached over a network: every answer is a promise, a grant
 * reserves the block of fencing tokens the engine asks for, and waiters are
 * granted in arrival order on release. It counts the calls it gets, holds
 * its answers back on command ({@link pause}) and breaks down on command
 * ({@link breakDown}). Several `LockManager`s on one instance are several
 * processes sharing the store. Leases do not run out on their own: a lock is
 * held until released.
 */
export class FakeLockProvider extends LockProvider {
  readonly kind = 'fake';
  readonly fenceBlocks: boolean;
  /** How many calls of each kind reached the store. */
  readonly calls = { acquire: 0, extend: 0, release: 0, extendMany: 0, acquireMany: 0 };
  /** Every acquire request, in the order it reached the store. */
  readonly requests: LockAcquireRequest[] = [];
  private readonly holders = new Map<string, string>();
  private readonly queues = new Map<string, Queued[]>();
  private readonly lastToken = new Map<string, number>();
  private failure: string | undefined;
  private parked: Parked[] | undefined;

  /** `fenceBlocks: false`: a store that reserves no token blocks (the engine then hands nothing over in-process). */
  constructor(options: { fenceBlocks?: boolean } = {}) {
    super();
    this.fenceBlocks = options.fenceBlocks ?? true;
  }

  /** Whether `key` is free with nobody queued (what a batch of {@link BatchAcquiringFakeLockProvider} needs). */
  protected free(key: string): boolean {
    return !this.holders.has(key) && (this.queues.get(key)?.length ?? 0) === 0;
  }

  /** Gives `request.key` to `request.owner` at once (a batch's grant). */
  protected grantNow(request: LockBatchRequest): LockGrant {
    return this.grant({ ...request, wait: false }, false);
  }

  /** The store's failure while it is down, else `undefined`. */
  protected get down(): string | undefined {
    return this.failure;
  }

  /** Whether someone holds `key`. */
  isHeld(key: string): boolean {
    return this.holders.has(key);
  }

  /** Acquire calls queued at the store for `key`, plus those held back by {@link pause}. */
  waiting(key: string): number {
    const parked = this.parked?.filter((p) => p.request.key === key).length ?? 0;
    return (this.queues.get(key)?.length ?? 0) + parked;
  }

  /** Holds back the answers to acquire calls from now on, as a slow store would, until {@link resume}. */
  pause(): void {
    this.parked ??= [];
  }

  /** Answers the held-back acquire calls in the order they came, and answers at once again. */
  resume(): void {
    const parked = this.parked ?? [];
    this.parked = undefined;
    for (const { request, resolve } of parked) resolve(this.answer(request));
  }

  /**
   * The store goes down: queued and held-back acquire calls fail with
   * LockStoreError, and so does every later call until {@link recover}.
   */
  breakDown(detail = 'connection refused (the fake store is down)'): void {
    this.failure = detail;
    for (const queue of this.queues.values()) {
      for (const queued of queue.splice(0))
        this.settle(queued, () => queued.fail(new LockStoreError('acquire', detail)));
    }
    this.resume();
  }

  /** The store answers again; what it held when it broke down, it still holds. */
  recover(): void {
    this.failure = undefined;
  }

  acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    this.calls.acquire++;
    this.requests.push(request);
    const parked = this.parked;
    if (parked) return new Promise((resolve) => parked.push({ request, resolve }));
    return this.answer(request);
  }

  extend(key: string, owner: string): Promise<boolean> {
    this.calls.extend++;
    if (this.failure !== undefined) return Promise.reject(new LockStoreError('extend', this.failure));
    return Promise.resolve(this.holders.get(key) === owner);
  }

  release(key: string, owner: string): Promise<boolean> {
    this.calls.release++;
    if (this.failure !== undefined) return Promise.reject(new LockStoreError('release', this.failure));
    if (this.holders.get(key) !== owner) return Promise.resolve(false);
    this.holders.delete(key);
    const next = this.queues.get(key)?.shift();
    if (next) this.settle(next, () => next.answer(this.grant(next.request, true)));
    return Promise.resolve(true);
  }

  async ping(): Promise<number> {
    if (this.failure !== undefined) throw new LockStoreError('ping', this.failure);
    return 0;
  }

  async close(): Promise<void> {
    this.resume();
    for (const queue of this.queues.values()) {
      for (const queued of queue.splice(0)) this.settle(queued, () => queued.answer(null));
    }
  }

  /** What the store answers to `request` now: a grant, `null` (held, or a wait that ended), or a queue place. */
  private answer(request: LockAcquireRequest): Promise<LockGrant | null> {
    if (this.failure !== undefined) return Promise.reject(new LockStoreError('acquire', this.failure));
    if (!this.holders.has(request.key)) return Promise.resolve(this.grant(request, false));
    if (!request.wait || request.signal?.aborted || request.waitTimeout === 0) return Promise.resolve(null);
    return new Promise<LockGrant | null>((answer, fail) => {
      const queued: Queued = { request, answer, fail };
      const queue = this.queues.get(request.key) ?? [];
      this.queues.set(request.key, queue);
      queue.push(queued);
      const leave = (): void => {
        const i = queue.indexOf(queued);
        if (i < 0) return;
        queue.splice(i, 1);
        this.settle(queued, () => answer(null));
      };
      if (request.waitTimeout !== undefined) queued.timer = setTimeout(leave, request.waitTimeout);
      if (request.signal) {
        queued.onAbort = leave;
        request.signal.addEventListener('abort', leave, { once: true });
      }
    });
  }

  /** Gives `request.key` to `request.owner`, reserving `request.fences` tokens when this store reserves blocks. */
  private grant(request: LockAcquireRequest, queued: boolean): LockGrant {
    const fences = this.fenceBlocks ? (request.fences ?? 1) : 1;
    const fencingToken = (this.lastToken.get(request.key) ?? 0) + 1;
    this.lastToken.set(request.key, fencingToken + fences - 1);
    this.holders.set(request.key, request.owner);
    // A grant after a wait: its lease starts now, not when the call came.
    return { fencingToken, queued, fences, leaseStartedAt: queued ? performance.now() : undefined };
  }

  /** Stops a queued call's timer and abort listener, then answers it. */
  private settle(queued: Queued, answer: () => void): void {
    if (queued.timer !== undefined) clearTimeout(queued.timer);
    if (queued.onAbort) queued.request.signal?.removeEventListener('abort', queued.onAbort);
    answer();
  }

  /** Another process takes `key` over (as after a lease that ran out): its holder's next extend answers `false`. */
  takeOver(key: string): void {
    this.holders.set(key, `someone-else:${key}`);
  }

  /** Whether `owner` holds `key`, or the store's failure when it is down. */
  protected owns(key: string, owner: string): boolean {
    if (this.failure !== undefined) throw new LockStoreError('extend', this.failure);
    return this.holders.get(key) === owner;
  }
}

/**
 * A {@link FakeLockProvider} that also renews many locks in one call
 * (`extendMany`): `calls.extendMany` counts those calls, `batches` their sizes.
 */
export class BatchingFakeLockProvider extends FakeLockProvider {
  /** The number of locks in each `extendMany` call, in order. */
  readonly batches: number[] = [];

  extendMany(locks: readonly LockExtension[]): Promise<boolean[]> {
    this.calls.extendMany++;
    this.batches.push(locks.length);
    try {
      return Promise.resolve(locks.map((l) => this.owns(l.key, l.owner)));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}

/**
 * A {@link FakeLockProvider} that also takes several locks in one call
 * (`acquireMany`): all free with nobody queued, or none. `calls.acquireMany`
 * counts those calls, `refused` how many answered `null`.
 */
export class BatchAcquiringFakeLockProvider extends FakeLockProvider {
  refused = 0;

  acquireMany(requests: readonly LockBatchRequest[]): Promise<LockGrant[] | null> {
    this.calls.acquireMany++;
    if (this.down !== undefined) return Promise.reject(new LockStoreError('acquire', this.down));
    if (!requests.every((r) => this.free(r.key))) {
      this.refused++;
      return Promise.resolve(null);
    }
    return Promise.resolve(requests.map((r) => this.grantNow(r)));
  }
}
