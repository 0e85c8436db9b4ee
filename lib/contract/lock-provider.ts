import type {
  LockAcquireCapabilities,
  LockGrantCapabilities,
  LockProviderCapabilities,
} from './lock-provider-capabilities.js';
import type { MaybePromise } from './maybe-promise.js';

// What a store MAY offer beyond this contract is in lock-provider-capabilities.ts (re-exported here).
export { lockHolder } from './lock-provider-capabilities.js';
export type {
  LockAcquireCapabilities,
  LockBatchRequest,
  LockExtension,
  LockGrantCapabilities,
  LockHolder,
  LockProviderCapabilities,
  LockStoreSetup,
} from './lock-provider-capabilities.js';
export type { MaybePromise } from './maybe-promise.js';

/**
 * What a {@link LockProvider} is asked to do when a lock is acquired.
 * Keys arrive with the module's `keyPrefix` already applied. The optional
 * fields of {@link LockAcquireCapabilities} come only to a store that
 * offers their capability.
 */
export interface LockAcquireRequest extends LockAcquireCapabilities {
  /** The store key of the lock (prefix included). */
  readonly key: string;
  /** A random token that identifies this one acquisition (128 bits, hex). */
  readonly owner: string;
  /**
   * Lease length in ms: the lock frees itself this long after the last grant
   * or extension. At most `MAX_DURATION_MS` (the engine checks every duration
   * before it calls a store; a store may take longer ones, need not).
   */
  readonly ttl: number;
  /**
   * `false`: try once and answer at once. `true`: queue behind the current
   * holder and earlier waiters (FIFO) until granted, `waitTimeout` passes, or
   * `signal` aborts.
   */
  readonly wait: boolean;
  /** Longest wait in ms when `wait` is true, at most `MAX_DURATION_MS`; `undefined` waits without bound. */
  readonly waitTimeout?: number;
  /** Aborts a wait: the provider leaves the queue and resolves `null`. */
  readonly signal?: AbortSignal;
}

/** What a provider returns for a granted lock; the fields of {@link LockGrantCapabilities} may be added. */
export interface LockGrant extends LockGrantCapabilities {
  /** Strictly greater than every fencing token granted earlier for the key (see docs/engine.md, "Fencing tokens"). */
  readonly fencingToken: number;
}

/**
 * The optional members a store may define ({@link LockProviderCapabilities}),
 * declared on every `LockProvider`.
 */
// A class and an interface of one name merge: the capabilities are optional members of the class, documented in their own file.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface LockProvider extends LockProviderCapabilities {}

/**
 * A lock store. It is both the DI token and the contract: inject
 * `LockProvider` to reach the store in use, and extend it to write a store.
 * These six members are what every store must do; what a store may offer
 * besides (the local hand-off's fence blocks and transfers, semaphores,
 * batches, inspection) is {@link LockProviderCapabilities}. The rules every
 * store keeps: docs/custom-store.md; the conformance kit (`nest-lock/testing`) checks them.
 *
 * @example Replace the store in a test module
 * ```ts
 * const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
 *   .overrideProvider(LockProvider)
 *   .useValue(new InMemoryLockProvider())
 *   .compile();
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class LockProvider {
  /** A short name for logs and health output: `memory`, `redis`, `postgres`, `mysql`. */
  abstract readonly kind: string;

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
