import { LockProvider, MAX_DURATION_MS, type LockAcquireRequest, type LockGrant } from 'nest-lock';

/** The holder of a key: its owner token and when its lease ends (performance.now() time). */
interface Lease {
  owner: string;
  endsAt: number;
  timer: ReturnType<typeof setTimeout>;
}

/** A queued acquire, and how to answer it. */
interface Waiter {
  request: LockAcquireRequest;
  answer: (grant: LockGrant | null) => void;
}

/**
 * A small store: plain locks of one process, kept in maps. Each key has at
 * most one holder, a FIFO queue of waiters and a fencing-token counter that
 * never goes back. A lease ends by release, or by itself at its end, and
 * then the key goes to the first waiter.
 */
export class MapLockProvider extends LockProvider {
  readonly kind = 'map';
  private readonly leases = new Map<string, Lease>();
  private readonly queues = new Map<string, Waiter[]>();
  private readonly tokens = new Map<string, number>();

  async acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const { key } = request;
    if (!this.holderOf(key) && !this.queues.get(key)?.length) return this.grant(request, false);
    if (!request.wait || request.waitTimeout === 0 || request.signal?.aborted) return null;
    return new Promise((resolve) => {
      const leave = () => {
        const queue = this.queues.get(key) ?? [];
        if (queue.includes(waiter)) queue.splice(queue.indexOf(waiter), 1);
        clearTimeout(timeout);
        request.signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = { request, answer: (grant) => (leave(), resolve(grant)) };
      const onAbort = () => waiter.answer(null);
      const timeout = request.waitTimeout === undefined ? undefined : setTimeout(onAbort, request.waitTimeout);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      this.queues.set(key, [...(this.queues.get(key) ?? []), waiter]);
    });
  }

  async extend(key: string, owner: string, ttl: number): Promise<boolean> {
    const lease = this.holderOf(key);
    if (lease?.owner !== owner) return false;
    clearTimeout(lease.timer);
    this.leases.set(key, this.lease(key, owner, ttl));
    return true;
  }

  async release(key: string, owner: string): Promise<boolean> {
    const lease = this.holderOf(key);
    if (lease?.owner !== owner) return false;
    this.end(key);
    return true;
  }

  async ping(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    for (const lease of this.leases.values()) clearTimeout(lease.timer);
    this.leases.clear();
    for (const queue of this.queues.values()) for (const waiter of [...queue]) waiter.answer(null);
  }

  /** The live lease of `key`; one that has ended (its timer may not have run yet) is ended now. */
  private holderOf(key: string): Lease | undefined {
    const lease = this.leases.get(key);
    if (lease && lease.endsAt <= performance.now()) this.end(key);
    return this.leases.get(key);
  }

  /** Frees `key` and hands it to the first waiter. */
  private end(key: string): void {
    clearTimeout(this.leases.get(key)?.timer);
    this.leases.delete(key);
    const next = this.queues.get(key)?.[0];
    if (next) next.answer(this.grant(next.request, true));
  }

  private grant(request: LockAcquireRequest, queued: boolean): LockGrant {
    const fencingToken = (this.tokens.get(request.key) ?? 0) + 1;
    this.tokens.set(request.key, fencingToken);
    const leaseStartedAt = performance.now();
    this.leases.set(request.key, this.lease(request.key, request.owner, request.ttl));
    return { fencingToken, queued, leaseStartedAt };
  }

  private lease(key: string, owner: string, ttl: number): Lease {
    // Durations are at most MAX_DURATION_MS, the longest timer Node keeps.
    const timer = setTimeout(() => this.holderOf(key), Math.min(ttl + 1, MAX_DURATION_MS));
    timer.unref();
    return { owner, endsAt: performance.now() + ttl, timer };
  }
}
