import { instanceIdOf } from '../shared/owner-token.js';
import type { LockInspectPage, LockInspectRequest } from './stored-lock.interface.js';

/**
 * What a {@link LockProvider} is asked to do when a lock is acquired.
 * Keys arrive with the module's `keyPrefix` already applied.
 */
export interface LockAcquireRequest {
  /** The store key of the lock (prefix included). */
  readonly key: string;
  /** A random token that identifies this one acquisition (128 bits, hex). */
  readonly owner: string;
  /** Lease length in ms: the lock frees itself this long after the last grant or extension. */
  readonly ttl: number;
  /**
   * `false`: try once and answer at once. `true`: queue behind the current
   * holder and earlier waiters (FIFO) until granted, `waitTimeout` passes, or
   * `signal` aborts.
   */
  readonly wait: boolean;
  /** Longest wait in ms when `wait` is true; `undefined` waits without bound. */
  readonly waitTimeout?: number;
  /** Aborts a wait: the provider leaves the queue and resolves `null`. */
  readonly signal?: AbortSignal;
  /**
   * How many consecutive fencing tokens to reserve with the grant (only asked
   * of a provider whose {@link LockProvider.fenceBlocks} is `true`). The
   * grant's `fencingToken` is the first of them; the engine gives the others
   * to waiters of this process that it hands the lock to without a store
   * call. The next grant of the key draws tokens above the whole block.
   */
  readonly fences?: number;
}

/** What a provider returns for a granted lock. */
export interface LockGrant {
  /**
   * Strictly greater than every fencing token granted earlier for the same
   * key by the same store, also across a failover of the store as far as
   * the store can tell (a store with replicas states its assumption, e.g.
   * synchronized clocks). Pass it to storage that must reject stale writers.
   */
  readonly fencingToken: number;
  /** `true` when the grant came after queueing behind another holder (for the `contended` event). */
  readonly queued?: boolean;
  /**
   * `performance.now()` time no later than the moment the store started this
   * grant's lease. The engine counts the lease (and the renewal schedule) from
   * it. Set it for grants after a wait: their lease starts at the hand-off, not
   * when `acquire` was called. Default: the time `acquire` was called.
   */
  readonly leaseStartedAt?: number;
  /**
   * The lease the store set for this grant, in ms from `leaseStartedAt`, when
   * it is shorter than the requested `ttl` (e.g. a hand-off that the holder
   * has not renewed yet). The engine renews it before it ends. Default: `ttl`.
   */
  readonly leaseMs?: number;
  /**
   * How many fencing tokens the grant reserved, `fencingToken` being the
   * first (see {@link LockAcquireRequest.fences}). Default: 1.
   */
  readonly fences?: number;
}

/**
 * Who holds a key now, as a store tells it ({@link LockProvider.holder}).
 */
export interface LockHolder {
  /** The owner token of the grant that holds the key. */
  readonly owner: string;
  /**
   * The instance (process) that holds it, when its owner token names one:
   * leader election does (see `instanceId` in the module options); a plain
   * lock's token names none, to keep it short.
   */
  readonly instanceId: string | undefined;
  /** What is left of the holder's lease, in ms, on the store's clock. */
  readonly remainingMs: number;
}

/**
 * A value, or a promise of it. Stores in the process's own memory answer
 * `acquire`, `extend` and `release` synchronously, which saves every lock
 * call a few promise turns; stores behind a network return promises. Callers
 * may always `await` the result.
 */
export type MaybePromise<T> = T | Promise<T>;

/** A {@link LockHolder} for the owner token a store found holding a key. */
export function lockHolder(owner: string, remainingMs: number): LockHolder {
  return { owner, instanceId: instanceIdOf(owner), remainingMs: Math.max(0, remainingMs) };
}

/** Whether `value` is a promise (or another thenable) rather than a plain answer. @internal */
export function isThenable<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * A lock store. It is both the DI token and the contract: inject
 * `LockProvider` to reach the store in use, and extend it to write a store.
 *
 * Contract (checked by the conformance suite in `test/conformance/`):
 * - a key has at most one owner at a time; a grant sets a lease of `ttl` ms,
 *   after which the key is free again unless extended;
 * - `extend` and `release` act only when `owner` still holds the key;
 * - waiters are granted in arrival order and are woken by release (no
 *   polling), and by lease expiry of a holder that vanished;
 * - every grant's fencing token is greater than all earlier ones for that key;
 * - a store that fails raises {@link LockStoreError}, within a bounded time,
 *   and never answers "held" for "unreachable";
 * - `acquire`, `extend` and `release` may answer synchronously (an in-process
 *   store) or with a promise; a synchronous failure is thrown.
 *
 * @example Replace the store in a test module
 * ```ts
 * const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
 *   .overrideProvider(LockProvider)
 *   .useValue(new InMemoryLockProvider())
 *   .compile();
 * ```
 */
export abstract class LockProvider {
  /** A short name for logs and health output: `memory`, `redis`, `postgres`. */
  abstract readonly kind: string;

  /**
   * `true` when `acquire` honours {@link LockAcquireRequest.fences} (reserves
   * a block of fencing tokens per grant). The engine then passes a lock that
   * this process holds straight to this process's next waiter on release,
   * without a store round trip (see `localHandOff` in the module options).
   * Stores in the process's own memory gain nothing from it. Default `false`.
   */
  readonly fenceBlocks?: boolean;

  /**
   * Takes the lock for `request.owner`, or returns `null` when it is held and
   * `request.wait` is false, when the wait timed out, or when `request.signal`
   * aborted the wait.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  abstract acquire(request: LockAcquireRequest): MaybePromise<LockGrant | null>;

  /**
   * Sets the lease of a held lock to end `ttl` ms from now (longer or
   * shorter). Returns `false` when `owner` no longer holds `key`.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  abstract extend(key: string, owner: string, ttl: number): MaybePromise<boolean>;

  /**
   * Frees the lock if `owner` still holds it, and hands it to the next
   * waiter. Returns `false` when `owner` no longer held it (nothing changed).
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  abstract release(key: string, owner: string): MaybePromise<boolean>;

  /**
   * Optional. Runs `send` at once and returns what it returns; the store
   * calls that `send` makes may leave for the store together (one network
   * write). The engine wraps a release in it when the next waiter of this
   * process queues for the same key right after, so that both calls reach
   * the store at once and no other process's call comes between them (which
   * would let that process's next waiter overtake this one's). A store
   * without it sends each call on its own, in the same order.
   */
  coalesce?<T>(send: () => T): T;

  /**
   * Optional. Who holds `key` now (a lease that has not ended), or `null`
   * when it is free. A read only: nothing on the lock path calls it (leader
   * election asks it for the current leader, inspection tools may too). All
   * built-in stores have it; build the answer with `lockHolder(owner, ms)`.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  holder?(key: string): Promise<LockHolder | null>;

  /**
   * Optional. One page of the locks held now under `request.prefix`: a
   * read for inspection tools (`LockService.inspect()`, the lock page), never
   * on the lock path. Bounded: about `request.limit` locks per call, and a
   * `cursor` for the next page. A lock held during the whole paging is
   * returned once; one taken or released meanwhile may or may not be. All
   * built-in stores have it.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  inspect?(request: LockInspectRequest): Promise<LockInspectPage>;

  /**
   * Optional. Calls `onLost` each time the connection to the store drops,
   * until the returned function is called. A store that can restart without
   * its data (Redis without persistence) has then forgotten every lease:
   * leader election steps down on it, before the restarted store could
   * elect another replica. Stores whose leases survive a restart
   * (PostgreSQL) and in-process stores need not have it.
   */
  watchConnection?(onLost: () => void): () => void;

  /**
   * Round trip to the store, in ms. Used by health checks.
   * @throws {LockStoreError} when the store does not answer.
   */
  abstract ping(): Promise<number>;

  /**
   * Closes what the provider opened (connections, timers). Waiters still
   * queued resolve `null`. Called by the module on shutdown for providers it
   * built from options; a provider you pass in yourself is yours to close.
   */
  abstract close(): Promise<void>;
}
