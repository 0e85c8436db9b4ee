import { instanceIdOf } from '../shared/owner-token.js';
import type { MaybePromise } from './maybe-promise.js';
import type { LockInspectPage, LockInspectRequest } from './stored-lock.interface.js';
import type { LockMode } from './lock-options.interface.js';

/*
 * What a store MAY offer beyond the contract of lock-provider.ts: every member
 * and field here is optional, and a store that offers none of them passes the
 * conformance suite. Each is documented here, in one place; the engine uses a
 * capability only when the store declares it (the local hand-off of
 * docs/engine.md, semaphores and shared locks, batches, inspection, health).
 */

/**
 * The fields of a {@link LockAcquireRequest} that the engine sends only to a
 * store that offers the capability each names: a store that offers none
 * never receives them.
 */
export interface LockAcquireCapabilities {
  /**
   * How many consecutive fencing tokens to reserve with the grant, the first
   * being its own (only asked when {@link LockProviderCapabilities.fenceBlocks} is `true`).
   * The next grant of the key draws tokens above the whole block.
   */
  readonly fences?: number;
  /**
   * `'shared'`: hold together with other shared holders, never with an
   * exclusive one. Absent: `'exclusive'`. Only sent to stores whose
   * {@link LockProviderCapabilities.supports} lists `shared`.
   */
  readonly mode?: LockMode;
  /**
   * Exclusive holders the key admits at once (a semaphore), an integer >= 1.
   * Absent: 1. A store that finds the key held or awaited with another limit
   * throws {@link LockOptionsError} naming both. Only sent (above 1) to
   * stores whose {@link LockProviderCapabilities.supports} lists `limit`.
   */
  readonly limit?: number;
  /**
   * `true` when the engine renews the lease while the lock is held (the
   * `renew` option): a store may then grant a waiter a lease shorter than
   * `ttl` ({@link LockGrantCapabilities.leaseMs}), which the engine renews to `ttl`.
   * Otherwise a grant's lease is the full `ttl`.
   */
  readonly renews?: boolean;
}

/** The fields a store may add to a {@link LockGrant}; each has a default that a store without it gets. */
export interface LockGrantCapabilities {
  /** `true` when the grant came after queueing behind another holder (for the `contended` event). Default: `false`. */
  readonly queued?: boolean;
  /**
   * `performance.now()` time no later than the store's start of this lease
   * (set it for grants after a wait). Default: when `acquire` was called.
   */
  readonly leaseStartedAt?: number;
  /** The lease the store set, in ms from `leaseStartedAt`, when shorter than `ttl`. Default: `ttl`. */
  readonly leaseMs?: number;
  /**
   * How many fencing tokens the grant reserved, `fencingToken` being the
   * first (see {@link LockAcquireCapabilities.fences}). Default: 1.
   */
  readonly fences?: number;
}

/**
 * What a store may offer beyond the contract: each member optional, each
 * used by the engine only when the store has it. `LockProvider` carries them
 * all (as optional members), so a store declares one by defining it.
 */
export interface LockProviderCapabilities {
  /**
   * `true` when `acquire` honours {@link LockAcquireCapabilities.fences}, which
   * turns on the local hand-off (docs/engine.md). Default `false`.
   */
  readonly fenceBlocks?: boolean;

  /**
   * What the store can do beyond the plain lock: `limit` (semaphores,
   * {@link LockAcquireCapabilities.limit} above 1) and `shared` (read/write,
   * {@link LockAcquireCapabilities.mode}). Absent: neither; the engine then
   * refuses such calls with a {@link LockOptionsError}.
   */
  readonly supports?: { readonly limit?: boolean; readonly shared?: boolean };

  /**
   * Hands the permit of a semaphore (an exclusive grant with
   * `limit` above 1) that `from` holds on `key` over to the new owner `to`:
   * `from` holds it no more, `to` holds it with a lease of `ttl` ms and a
   * fencing token above every earlier one of the key, and the number of
   * holders does not change. The queue is passed over: the engine calls it
   * for a waiter of its own process, within the bounds of its local hand-off
   * (docs/engine.md). Answers the grant as `acquire` does (a `LockGrant`), or
   * `null` (nothing changed) when `from` no longer holds a permit of `key`.
   * With it, the engine hands permits over locally.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  transfer?(
    key: string,
    from: string,
    to: string,
    ttl: number,
  ): MaybePromise<(LockGrantCapabilities & { readonly fencingToken: number }) | null>;

  /**
   * Runs `send` at once and returns what it returns; the store
   * calls it makes may leave together (one network write), so that no other
   * process's call comes between them.
   */
  coalesce?<T>(send: () => T): T;

  /**
   * Who holds `key` now, or `null` when it is free; never called
   * on the lock path. Build the answer with `lockHolder(owner, ms)`.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  holder?(key: string): Promise<LockHolder | null>;

  /**
   * One page (about `request.limit` locks, and a `cursor`) of the
   * locks held now under `request.prefix`, for `inspect()`; never on the lock path.
   * @throws {LockStoreError} when the store cannot be reached or fails.
   */
  inspect?(request: LockInspectRequest): Promise<LockInspectPage>;

  /**
   * Calls `onLost` each time the connection to the store drops,
   * until the returned function is called; for stores that can restart
   * without their data (leader election steps down on it).
   */
  watchConnection?(onLost: () => void): () => void;

  /**
   * What the store found wrong in how its server is set up, as of
   * its last check (Redis: an eviction policy that may drop lock keys, read
   * at connect, after every reconnect and on `ping`). Health checks report
   * it; the module's boot stops when the store refuses the setup.
   */
  setupCheck?(): LockStoreSetup;

  /**
   * `extend` for many locks in one store round trip: one
   * answer per lock, in order, each meaning what `extend` answers (`false`:
   * that owner no longer holds that key). The engine renews held locks
   * through it (at most 1,000 locks a call) when present.
   * @throws {LockStoreError} when the store cannot be reached or fails (the batch as a whole).
   */
  extendMany?(locks: readonly LockExtension[]): MaybePromise<boolean[]>;

  /**
   * Takes several plain locks (exclusive, limit 1) at once, all or
   * none, without waiting: each key is granted only when it is free and no
   * waiter is queued for it. Answers one grant per request, in order (each
   * meaning what `acquire` grants: a fencing token above every earlier one
   * of that key, a block of `fences` tokens when {@link fenceBlocks}), or
   * `null` when not all of them could be taken at once (then none is held).
   * Every lock it grants is then a single lock: `extend`, `release` and
   * renewal act on each key on its own. The keys are distinct. The engine
   * takes the names of a multi-name lock through it first, then one by one
   * (waiting in each key's queue) when it answers `null`.
   * @throws {LockStoreError} when the store cannot be reached or fails (nothing is left held).
   */
  acquireMany?(
    requests: readonly LockBatchRequest[],
  ): MaybePromise<Array<LockGrantCapabilities & { readonly fencingToken: number }> | null>;
}

/**
 * Who holds a key now, as a store tells it ({@link LockProviderCapabilities.holder}).
 */
export interface LockHolder {
  /** The owner token of the grant that holds the key. */
  readonly owner: string;
  /** The instance that holds it, when its owner token names one (leader locks, or every lock with `instanceId` set). */
  readonly instanceId: string | undefined;
  /** What is left of the holder's lease, in ms, on the store's clock. */
  readonly remainingMs: number;
}

/** A {@link LockHolder} for the owner token a store found holding a key. */
export function lockHolder(owner: string, remainingMs: number): LockHolder {
  return { owner, instanceId: instanceIdOf(owner), remainingMs: Math.max(0, remainingMs) };
}

/** What a store found wrong in how its server is set up ({@link LockProviderCapabilities.setupCheck}). */
export interface LockStoreSetup {
  /** One message per problem: what it is, what it can do to locks, what to set. Empty when none was found. */
  readonly problems: readonly string[];
  /** `true` when the store was told to refuse such a server: its lock calls and `ping` fail with `LockStoreError` until it is fixed. */
  readonly refused: boolean;
}

/** One lock of {@link LockProviderCapabilities.acquireMany}: what a plain `acquire` without waiting takes. */
export interface LockBatchRequest {
  /** The store key of the lock (prefix included). */
  readonly key: string;
  /** A random token that identifies this one acquisition. */
  readonly owner: string;
  /** Lease length in ms. */
  readonly ttl: number;
  /** Fencing tokens to reserve with the grant, as {@link LockAcquireCapabilities.fences}. */
  readonly fences?: number;
}

/** One lock of {@link LockProviderCapabilities.extendMany}: what `extend(key, owner, ttl)` takes. */
export interface LockExtension {
  readonly key: string;
  readonly owner: string;
  /** The new lease in ms from now. */
  readonly ttl: number;
}
