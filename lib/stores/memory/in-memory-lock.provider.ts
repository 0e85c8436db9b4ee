import { LockError, LockOptionsError } from '../../errors/lock.errors.js';
import { holdConflictMessage, limitMismatchMessage, optionMessage, expected } from '../../errors/lock.messages.js';
import { KeyState, type Holder, type Waiter } from './key-state.js';
import { IdleSweep } from './idle-sweep.js';
import {
  LockProvider,
  lockHolder,
  type LockAcquireRequest,
  type LockGrant,
  type LockHolder,
  type MaybePromise,
} from '../../contract/lock-provider.js';
import { ownerTokenFor } from '../../shared/owner-token.js';
import type { LockInspectPage, LockInspectRequest, StoredLock } from '../../contract/stored-lock.interface.js';
import { now } from '../../shared/clock.js';
import { MAX_TIMER_MS, timerDelay } from '../../shared/timer.js';
import { assertDuration } from '../../contract/lock-limits.validation.js';
import type { LockMode } from '../../contract/lock-options.interface.js';
import type { LockBatchRequest, LockExtension } from '../../contract/lock-provider.js';
import { allOf } from '../../contract/maybe-promise.js';

/** What {@link InMemoryLockProvider.hold} may be told besides the name. */
export interface InMemoryHoldOptions {
  /** Lease in ms. Default: about 24 days (until released). */
  ttl?: number;
  /** The instance the hold names as holder (see `@Leader`). */
  instanceId?: string;
  /** `'shared'`: hold as a reader. Default: exclusive. */
  mode?: LockMode;
  /** How many holders to take at once (readers, or permits of a semaphore). Default 1. */
  permits?: number;
  /** The semaphore's limit, as the app gives it (exclusive only). Default: `permits`. */
  limit?: number;
}

/**
 * The default store: locks in this process's memory. It behaves like a real
 * store (expiring leases, owner-checked release and extend, FIFO hand-off,
 * fencing tokens), but excludes callers of **one process only**: use Redis
 * or PostgreSQL for more. Answers synchronously except to a caller that
 * queues; no timer runs per uncontended lock (one sweep per store drops
 * released and lapsed names within a second). Doubles as a test double:
 * {@link InMemoryLockProvider.hold} plays "another instance holds this lock".
 */
export class InMemoryLockProvider extends LockProvider {
  readonly kind = 'memory';
  /** Semaphores (`limit`) and read/write locks (`mode: 'shared'`). */
  readonly supports = { limit: true, shared: true } as const;
  private readonly entries = new Map<string, KeyState>();
  /** Drops the keys nobody holds or awaits any more. */
  private readonly sweep = new IdleSweep(this.entries);
  /** One counter for all keys: strictly increasing per key, and nothing to keep per key. */
  private fence = 0;
  /** The one key kept without holder or waiter (see {@link forget}). */
  private idleKey: string | undefined;

  /** Answers at once, with a promise only when the caller queues. */
  acquire(request: LockAcquireRequest): MaybePromise<LockGrant | null> {
    const { key, owner, ttl } = request;
    const shared = request.mode === 'shared';
    const limit = shared ? 1 : (request.limit ?? 1);
    const t = now();
    let entry = this.entries.get(key);
    if (entry) {
      this.settle(entry, key, t);
      entry = this.entries.get(key);
    }
    if (!entry) {
      const fencingToken = ++this.fence;
      this.entries.set(key, new KeyState(owner, t + ttl, fencingToken, t, shared, limit));
      this.sweep.watch();
      return { fencingToken };
    }
    if (!shared) {
      const recorded = entry.recordedLimit();
      if (recorded !== undefined && recorded !== limit)
        throw new LockOptionsError(limitMismatchMessage(key, recorded, limit));
    }
    if (entry.waiters.length === 0 && entry.admits(shared, limit)) {
      const fencingToken = ++this.fence;
      entry.add(owner, t + ttl, fencingToken, t, shared, limit);
      return { fencingToken };
    }
    if (!request.wait || request.signal?.aborted || request.waitTimeout === 0) return null;
    const state = entry;
    return new Promise<LockGrant | null>((resolve) => {
      const waiter: Waiter = { owner, ttl, shared, limit, resolve };
      if (request.waitTimeout !== undefined || request.signal) {
        const leave = (): void => {
          if (!state.waiters.remove(waiter)) return;
          this.cleanup(waiter);
          resolve(null);
          // Its leaving may let the waiters behind it in (e.g. readers behind a writer that gave up).
          if (this.entries.get(key) === state) this.settle(state, key);
        };
        // (not unref'd: like any timer, a pending wait keeps the process alive until it ends)
        if (request.waitTimeout !== undefined) waiter.timer = setTimeout(leave, request.waitTimeout);
        if (request.signal) {
          waiter.signal = request.signal;
          waiter.onAbort = leave;
          request.signal.addEventListener('abort', leave, { once: true });
        }
      }
      state.waiters.push(waiter);
      if (state.expiry === undefined) this.arm(state, key);
    });
  }

  /** {@inheritDoc LockProviderCapabilities.acquireMany} Every key free (no holder, no waiter): all are taken at once; else `null`. */
  acquireMany(requests: readonly LockBatchRequest[]): LockGrant[] | null {
    const t = now();
    for (const { key } of requests) {
      const entry = this.entries.get(key);
      if (entry) this.settle(entry, key, t);
      // (a key's idle state may stay in the map: free when nobody holds or waits)
      const state = this.entries.get(key);
      if (state && (state.waiters.length > 0 || !state.admits(false, 1))) return null;
    }
    return requests.map(({ key, owner, ttl }) => {
      const fencingToken = ++this.fence;
      const state = this.entries.get(key);
      if (state) state.add(owner, t + ttl, fencingToken, t, false, 1);
      else this.entries.set(key, new KeyState(owner, t + ttl, fencingToken, t, false, 1));
      this.sweep.watch();
      return { fencingToken };
    });
  }

  extend(key: string, owner: string, ttl: number): MaybePromise<boolean> {
    const entry = this.entries.get(key);
    const t = now();
    const h = entry?.find(owner);
    if (!entry || !h || h.expiresAt <= t) return false;
    h.expiresAt = t + ttl;
    if (entry.waiters.length > 0) this.arm(entry, key);
    return true;
  }

  release(key: string, owner: string): MaybePromise<boolean> {
    const entry = this.entries.get(key);
    const h = entry?.find(owner);
    if (!entry || !h) return false;
    const t = now();
    const wasLive = h.expiresAt > t;
    entry.remove(h);
    this.settle(entry, key, t, true);
    return wasLive;
  }

  /** {@inheritDoc LockProviderCapabilities.holder} */
  async holder(key: string): Promise<LockHolder | null> {
    const t = now();
    const h = this.liveHolders(key, t)[0];
    return h === undefined ? null : lockHolder(h.owner, h.expiresAt - t);
  }

  async ping(): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    for (const entry of this.entries.values()) {
      for (const waiter of entry.waiters.drain()) {
        this.cleanup(waiter);
        waiter.resolve(null);
      }
      this.disarm(entry);
    }
    this.entries.clear();
    this.sweep.stop();
    this.idleKey = undefined;
  }

  /** {@inheritDoc LockProviderCapabilities.inspect} Pages are in key order, one entry per holder; a page ends after a whole key. */
  async inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    const t = now();
    const epochNow = Date.now();
    const keys: string[] = [];
    for (const key of this.entries.keys()) {
      if (
        key.startsWith(request.prefix) &&
        (request.cursor === undefined || key > request.cursor) &&
        this.liveHolders(key, t).length > 0
      )
        keys.push(key);
    }
    keys.sort();
    const page = keys.slice(0, request.limit);
    const locks = page.flatMap((key) => {
      const entry = this.entries.get(key)!;
      return this.liveHolders(key, t).map((h): StoredLock => ({
        key,
        owner: h.owner,
        permits: entry.shared ? 1 : entry.limit,
        mode: entry.shared ? 'shared' : 'exclusive',
        fencingToken: h.fencingToken,
        remainingMs: h.expiresAt - t,
        heldSince: epochNow - (t - h.grantedAt),
        waiters: entry.waiters.length,
      }));
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
   *
   * `mode: 'shared'` holds it as a reader (other readers still enter, writers
   * and plain callers wait). `permits: n` takes n holders at once (n readers,
   * or n permits of a semaphore of `limit`, default `permits`: the semaphore is full);
   * give `limit` as the app does, or the app's calls throw `LockOptionsError`.
   * @throws {LockError} when the lock is held so that the hold cannot enter.
   * @throws {LockOptionsError} for `limit` with `mode: 'shared'`, or `permits` above `limit`.
   *
   * @example
   * ```ts
   * const release = await memory.hold('payouts');
   * await request(app.getHttpServer()).post('/payouts').expect(409);
   * await release();
   * const twoOfThree = await memory.hold('exports', { permits: 2, limit: 3 }); // one permit left
   * ```
   */
  async hold(name: string, options: number | InMemoryHoldOptions = {}): Promise<() => Promise<void>> {
    const {
      ttl = MAX_TIMER_MS,
      instanceId,
      mode,
      permits = 1,
      limit,
    } = typeof options === 'number' ? { ttl: options } : options;
    const where = `InMemoryLockProvider.hold(${JSON.stringify(name)})`;
    assertDuration(ttl, 'ttl', where, false);
    if (!Number.isInteger(permits) || permits < 1)
      throw new LockOptionsError(optionMessage(where, 'permits', expected.integerFrom1, permits));
    if (limit !== undefined && mode === 'shared')
      throw new LockOptionsError(optionMessage(where, 'limit', expected.holdLimitWithShared, limit));
    if (limit !== undefined && (!Number.isInteger(limit) || limit < permits))
      throw new LockOptionsError(optionMessage(where, 'limit', expected.holdLimit(permits), limit));
    const key = this.keyPrefix + name;
    const owners: string[] = [];
    const release = async (): Promise<void> => {
      for (const owner of owners) await this.release(key, owner);
    };
    for (let i = 0; i < permits; i++) {
      const owner = instanceId === undefined ? `test-hold:${++this.fence}` : ownerTokenFor(instanceId);
      const grant = await this.acquire({
        key,
        owner,
        ttl,
        wait: false,
        mode,
        limit: mode === 'shared' ? undefined : (limit ?? permits),
      });
      if (!grant) {
        await release();
        throw new LockError(holdConflictMessage(name, key));
      }
      owners.push(owner);
    }
    return release;
  }

  /** Test helper: whether the lock `name` (the module's `keyPrefix` applied) is held now, by anyone (any mode, any permit). */
  isHeld(name: string): boolean {
    return this.liveHolders(this.keyPrefix + name, now()).length > 0;
  }

  /** Test helper: drops every lock and wakes every waiter with `null`. */
  async reset(): Promise<void> {
    await this.close();
  }

  /** The holders of `key` whose lease has not ended by `t`. */
  private liveHolders(key: string, t: number): Holder[] {
    return (
      this.entries
        .get(key)
        ?.holders()
        .filter((h) => h.expiresAt > t) ?? []
    );
  }

  /**
   * Drops expired holders, then grants from the head of the queue while the
   * head may hold together with the holders; forgets a key nobody holds or
   * awaits. `changed`: a holder just left (re-arm the expiry timer).
   */
  private settle(entry: KeyState, key: string, t = now(), changed = false): void {
    if (entry.prune(t)) changed = true;
    const waiters = entry.waiters;
    for (
      let next = waiters.first();
      next !== undefined && entry.admits(next.shared, next.limit);
      next = waiters.first()
    ) {
      waiters.shift();
      this.cleanup(next);
      const fencingToken = ++this.fence;
      entry.add(next.owner, t + next.ttl, fencingToken, t, next.shared, next.limit);
      next.resolve({ fencingToken, queued: true, leaseStartedAt: t });
      changed = true;
    }
    if (waiters.length > 0) {
      if (changed || entry.expiry === undefined) this.arm(entry, key);
    } else {
      this.disarm(entry);
      if (entry.owner === undefined) this.forget(key);
    }
  }

  /**
   * `key` is held and awaited by nobody now. Its state stays as the one idle
   * entry (a name locked again and again reuses it: no map change, nothing
   * allocated) until the sweep, and the previous idle entry, if still idle, is dropped.
   */
  private forget(key: string): void {
    const previous = this.idleKey;
    if (previous === key) return;
    this.idleKey = key;
    if (previous === undefined) return;
    const idle = this.entries.get(previous);
    if (idle !== undefined && idle.owner === undefined && idle.waiters.length === 0) this.entries.delete(previous);
  }

  /**
   * Wakes the queue when the earliest lease of the key ends. A timer armed
   * for no later than that stays: firing early only settles and re-arms, and
   * a queue that moves on every release does not pay a timer per grant.
   */
  private arm(entry: KeyState, key: string): void {
    const at = entry.nextExpiry() + 1;
    if (entry.expiry !== undefined) {
      if (entry.expiryAt <= at) return;
      clearTimeout(entry.expiry);
    }
    const t = now();
    const delay = timerDelay(at - t);
    entry.expiryAt = t + delay;
    entry.expiry = setTimeout(() => {
      entry.expiry = undefined;
      if (this.entries.get(key) === entry && entry.waiters.length > 0) this.settle(entry, key);
    }, delay);
  }

  private disarm(entry: KeyState): void {
    if (entry.expiry !== undefined) clearTimeout(entry.expiry);
    entry.expiry = undefined;
  }

  private cleanup(waiter: Waiter): void {
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
  }

  /** {@inheritDoc LockProviderCapabilities.extendMany} {@link extend} for each lock, in order. */
  extendMany(locks: readonly LockExtension[]): MaybePromise<boolean[]> {
    return allOf(locks.map((l) => this.extend(l.key, l.owner, l.ttl)));
  }
}
