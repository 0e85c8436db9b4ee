import { LockProvider, LockStoreError, type LockAcquireRequest, type LockGrant } from '../../lib/index.js';

/** An acquire call queued at the store. */
interface Queued {
  readonly request: LockAcquireRequest;
  readonly answer: (grant: LockGrant | null) => void;
}

/**
 * A semaphore store in this process's memory, for engine tests of the local
 * hand-off of permits: exclusive holders up to the request's `limit`, a FIFO
 * queue granted on release, one fencing counter per key, and `transfer`
 * (a permit passes to a new owner with a fresh token). Every answer is a
 * promise, as from a store over a network. It counts its calls, records
 * the most holders a key ever had, can lose a holder's permit
 * ({@link expire}) and fail its transfers ({@link failTransfers}). Several
 * `LockManager`s on one instance are several processes.
 */
export class FakePermitProvider extends LockProvider {
  readonly kind = 'fake-permits';
  override readonly supports = { limit: true } as const;
  /** How many calls of each kind reached the store. */
  readonly calls = { acquire: 0, release: 0, transfer: 0, extend: 0 };
  /** Every grant's owner and token, in grant order (store grants and transfers). */
  readonly grants: Array<{ owner: string; token: number; by: 'acquire' | 'transfer' }> = [];
  /** The most holders each key had at once. */
  readonly most = new Map<string, number>();
  private readonly holders = new Map<string, Set<string>>();
  private readonly queues = new Map<string, Queued[]>();
  private readonly tokens = new Map<string, number>();
  private transferFailure: string | undefined;

  /** The holders of `key` now. */
  holding(key: string): number {
    return this.holders.get(key)?.size ?? 0;
  }

  /** Acquire calls queued at the store for `key`. */
  waiting(key: string): number {
    return this.queues.get(key)?.length ?? 0;
  }

  /** The lease of `owner` ends at the store (its process paused, say): its permit frees, and goes to the queue's head. */
  expire(key: string, owner: string): void {
    if (this.holders.get(key)?.delete(owner)) this.admit(key);
  }

  /** Transfers fail with LockStoreError from now on. */
  failTransfers(detail = 'connection reset (the fake store failed)'): void {
    this.transferFailure = detail;
  }

  acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    this.calls.acquire++;
    const { key } = request;
    if (this.waiting(key) === 0 && this.holding(key) < (request.limit ?? 1))
      return Promise.resolve(this.grant(request.key, request.owner, false));
    if (!request.wait) return Promise.resolve(null);
    return new Promise((answer) => {
      const queue = this.queues.get(key) ?? [];
      this.queues.set(key, queue);
      queue.push({ request, answer });
      if (request.waitTimeout !== undefined) {
        setTimeout(() => {
          const i = queue.findIndex((q) => q.request === request);
          if (i >= 0) queue.splice(i, 1)[0]!.answer(null);
        }, request.waitTimeout);
      }
    });
  }

  transfer(key: string, from: string, to: string): Promise<LockGrant | null> {
    this.calls.transfer++;
    if (this.transferFailure !== undefined) return Promise.reject(new LockStoreError('acquire', this.transferFailure));
    const holders = this.holders.get(key);
    if (!holders?.delete(from)) return Promise.resolve(null);
    return Promise.resolve(this.grant(key, to, true, 'transfer'));
  }

  extend(key: string, owner: string): Promise<boolean> {
    this.calls.extend++;
    return Promise.resolve(this.holders.get(key)?.has(owner) === true);
  }

  release(key: string, owner: string): Promise<boolean> {
    this.calls.release++;
    if (!this.holders.get(key)?.delete(owner)) return Promise.resolve(false);
    this.admit(key);
    return Promise.resolve(true);
  }

  async ping(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    for (const queue of this.queues.values()) for (const q of queue.splice(0)) q.answer(null);
  }

  /** Grants from the head of the queue while a permit is free. */
  private admit(key: string): void {
    const queue = this.queues.get(key) ?? [];
    while (queue.length > 0 && this.holding(key) < (queue[0]!.request.limit ?? 1)) {
      const { request, answer } = queue.shift()!;
      answer(this.grant(key, request.owner, true));
    }
  }

  private grant(key: string, owner: string, queued: boolean, by: 'acquire' | 'transfer' = 'acquire'): LockGrant {
    const token = (this.tokens.get(key) ?? 0) + 1;
    this.tokens.set(key, token);
    const holders = this.holders.get(key) ?? new Set<string>();
    this.holders.set(key, holders);
    holders.add(owner);
    this.most.set(key, Math.max(this.most.get(key) ?? 0, holders.size));
    this.grants.push({ owner, token, by });
    return { fencingToken: token, queued, leaseStartedAt: queued ? performance.now() : undefined };
  }
}
