import { LockError } from '../../errors/lock.errors.js';
import { holdConflictMessage } from '../../errors/lock.messages.js';
import { LockProvider, lockHolder, type LockAcquireRequest, type LockGrant, type LockHolder, type MaybePromise } from '../../contract/lock-provider.js';
import { ownerTokenFor } from '../../shared/owner-token.js';
import type { LockInspectPage, LockInspectRequest, StoredLock } from '../../contract/stored-lock.interface.js';
import { now } from '../../shared/clock.js';
import { isThenable, type LockExtension } from '../../contract/lock-provider.js';

interface Waiter {
  readonly owner: string;
  readonly ttl: number;
  readonly resolve: (grant: LockGrant | null) => void;
  timer?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Entry {
  owner: string | undefined;
  expiresAt: number;
  /** The holder's fencing token and grant time (for `inspect`). */
  fencingToken: number;
  grantedAt: number;
  readonly waiters: Waiter[];
  /**
   * Wakes the head waiter when a holder's lease runs out; armed only while
   * someone waits, and not unref'd: that waiter's grant depends on it.
   */
  expiry?: ReturnType<typeof setTimeout>;
}

const MAX_TIMER = 2 ** 31 - 1;

/**
 * The default store: locks in this process's memory. It behaves like a real
 * store (expiring leases, owner-checked release and extend, FIFO hand-off,
 * fencing tokens), but excludes callers of **one process only**: use Redis
 * or PostgreSQL for more. Answers synchronously except to a caller that
 * queues; no timer runs for an uncontended lock. Doubles as a test double:
 * {@link InMemoryLockProvider.hold} plays "another instance holds this lock".
 */
export class InMemoryLockProvider extends LockProvider {
  readonly kind = 'memory';
  private readonly entries = new Map<string, Entry>();
  /** One counter for all keys: strictly increasing per key, and nothing to keep per key. */
  private fence = 0;

  /** Answers at once, with a promise only when the caller queues. */
  acquire(request: LockAcquireRequest): MaybePromise<LockGrant | null> {
    const { key, owner, ttl } = request;
    const t = now();
    let entry = this.entries.get(key);
    if (entry) this.settle(entry, key, t);
    entry = this.entries.get(key);
    if (!entry) {
      const fencingToken = ++this.fence;
      entry = { owner, expiresAt: t + ttl, fencingToken, grantedAt: t, waiters: [] };
      this.entries.set(key, entry);
      return { fencingToken };
    }
    if (!request.wait || request.signal?.aborted || request.waitTimeout === 0) return null;
    return new Promise<LockGrant | null>((resolve) => {
      const waiter: Waiter = { owner, ttl, resolve };
      const leave = (): void => {
        const i = entry.waiters.indexOf(waiter);
        if (i < 0) return;
        entry.waiters.splice(i, 1);
        this.cleanup(waiter);
        if (entry.waiters.length === 0) this.disarm(entry);
        resolve(null);
      };
      // (not unref'd: like any timer, a pending wait keeps the process alive until it ends)
      if (request.waitTimeout !== undefined) waiter.timer = setTimeout(leave, request.waitTimeout);
      if (request.signal) {
        waiter.signal = request.signal;
        waiter.onAbort = leave;
        request.signal.addEventListener('abort', leave, { once: true });
      }
      entry.waiters.push(waiter);
      if (entry.expiry === undefined) this.arm(entry, key);
    });
  }

  extend(key: string, owner: string, ttl: number): MaybePromise<boolean> {
    const entry = this.entries.get(key);
    if (!entry || entry.owner !== owner || entry.expiresAt <= now()) return false;
    entry.expiresAt = now() + ttl;
    if (entry.waiters.length > 0) this.arm(entry, key);
    return true;
  }

  release(key: string, owner: string): MaybePromise<boolean> {
    const entry = this.entries.get(key);
    if (!entry || entry.owner !== owner) return false;
    const t = now();
    const wasLive = entry.expiresAt > t;
    entry.owner = undefined;
    this.settle(entry, key, t);
    return wasLive;
  }

  /** {@inheritDoc LockProvider.holder} */
  async holder(key: string): Promise<LockHolder | null> {
    const entry = this.entries.get(key);
    const t = now();
    if (!entry || entry.owner === undefined || entry.expiresAt <= t) return null;
    return lockHolder(entry.owner, entry.expiresAt - t);
  }

  async ping(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    for (const entry of this.entries.values()) {
      for (const waiter of entry.waiters.splice(0)) {
        this.cleanup(waiter);
        waiter.resolve(null);
      }
      this.disarm(entry);
    }
    this.entries.clear();
  }

  /** {@inheritDoc LockProvider.inspect} Pages are in key order. */
  async inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    const t = now();
    const epochNow = Date.now();
    const keys: string[] = [];
    for (const [key, entry] of this.entries) {
      if (key.startsWith(request.prefix) && (request.cursor === undefined || key > request.cursor) && entry.owner !== undefined && entry.expiresAt > t)
        keys.push(key);
    }
    keys.sort();
    const page = keys.slice(0, request.limit);
    const locks = page.map((key): StoredLock => {
      const entry = this.entries.get(key)!;
      return {
        key,
        owner: entry.owner!,
        permits: 1,
        fencingToken: entry.fencingToken,
        remainingMs: entry.expiresAt - t,
        heldSince: epochNow - (t - entry.grantedAt),
        waiters: entry.waiters.length,
      };
    });
    return keys.length > page.length ? { locks, cursor: page[page.length - 1] } : { locks };
  }

  /**
   * The key prefix that {@link hold} and {@link isHeld} put before a lock
   * name. The lock manager (and so `LockModule`, also when a test passes this
   * provider through `overrideProvider(LockProvider).useValue(...)`) sets it
   * to its `keyPrefix` when it starts using the provider. Default `'lock:'`.
   */
  keyPrefix = 'lock:';

  /** Told by the lock manager that uses this provider: its key prefix. @internal */
  useKeyPrefix(prefix: string): void {
    this.keyPrefix = prefix;
  }

  /**
   * Test helper: holds the lock `name` (as you write it in `@Locked` or
   * `withLock`; the module's `keyPrefix` is applied) as "another instance"
   * would, until the returned function is called (or `ttl` passes). With
   * `instanceId`, the hold names that instance as the holder:
   * `hold('leader:relay', { instanceId: 'replica-2' })` makes "another
   * replica" the leader of `relay` (see `@Leader`).
   * @throws {LockError} when the lock is already held.
   *
   * @example
   * ```ts
   * const release = await memory.hold('payouts');
   * await request(app.getHttpServer()).post('/payouts').expect(409);
   * await release();
   * ```
   */
  async hold(name: string, options: number | { ttl?: number; instanceId?: string } = {}): Promise<() => Promise<void>> {
    const { ttl = 2 ** 31 - 1, instanceId } = typeof options === 'number' ? { ttl: options } : options;
    const owner = instanceId === undefined ? `test-hold:${++this.fence}` : ownerTokenFor(instanceId);
    const key = this.keyPrefix + name;
    const grant = await this.acquire({ key, owner, ttl, wait: false });
    if (!grant) throw new LockError(holdConflictMessage(name, key));
    return async () => {
      await this.release(key, owner);
    };
  }

  /** Test helper: whether the lock `name` (the module's `keyPrefix` applied) is held now. */
  isHeld(name: string): boolean {
    const entry = this.entries.get(this.keyPrefix + name);
    return !!entry && entry.owner !== undefined && entry.expiresAt > now();
  }

  /** Test helper: drops every lock and wakes every waiter with `null`. */
  async reset(): Promise<void> {
    await this.close();
  }

  /** Grants a free (released or expired) key to the head waiter, or forgets it. */
  private settle(entry: Entry, key: string, t = now()): void {
    if (entry.owner !== undefined && entry.expiresAt > t) return;
    const next = entry.waiters.shift();
    if (!next) {
      this.disarm(entry);
      this.entries.delete(key);
      return;
    }
    this.cleanup(next);
    entry.owner = next.owner;
    entry.expiresAt = t + next.ttl;
    entry.fencingToken = ++this.fence;
    entry.grantedAt = t;
    next.resolve({ fencingToken: entry.fencingToken, queued: true, leaseStartedAt: t });
    if (entry.waiters.length > 0) this.arm(entry, key);
    else this.disarm(entry);
  }

  private arm(entry: Entry, key: string): void {
    this.disarm(entry);
    entry.expiry = setTimeout(
      () => {
        entry.expiry = undefined;
        if (this.entries.get(key) !== entry || entry.waiters.length === 0) return;
        if (entry.owner !== undefined && entry.expiresAt > now()) this.arm(entry, key);
        else this.settle(entry, key);
      },
      Math.min(MAX_TIMER, Math.max(0, entry.expiresAt + 1 - now())),
    );
  }

  private disarm(entry: Entry): void {
    if (entry.expiry !== undefined) clearTimeout(entry.expiry);
    entry.expiry = undefined;
  }

  private cleanup(waiter: Waiter): void {
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
  }

  /** {@inheritDoc LockProvider.extendMany} {@link extend} for each lock, in order. */
  extendMany(locks: readonly LockExtension[]): MaybePromise<boolean[]> {
    const answers = locks.map((l) => this.extend(l.key, l.owner, l.ttl));
    return answers.some(isThenable) ? Promise.all(answers) : (answers as boolean[]);
  }
}
