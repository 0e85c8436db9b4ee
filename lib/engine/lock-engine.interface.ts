import type { HeldLock } from './held-lock.js';
import type { LockEntry } from './lock-context.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';
import type { LockCallOptions } from '../contract/lock-options.interface.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import type { LockProvider, MaybePromise } from '../contract/lock-provider.js';

/**
 * What `@Locked` and leader election use of a {@link LockManager}
 * beyond its public API: the manager's `engine` (internal, not in the
 * package's declarations). @internal
 */
export interface LockEngine {
  readonly provider: LockProvider;
  readonly keyPrefix: string;
  readonly logger: LockLogger;
  /** `true` once the manager's `close()` was called. */
  readonly closing: boolean;
  /** Merges call options over the manager's defaults. */
  resolve(options: LockCallOptions | undefined): ResolvedCallOptions;
  /**
   * Takes the lock for a scoped call, following `onHeld`, and answers
   * `next` of its entry (`undefined` when skipped) in the same promise turn
   * as the store's answer; detects nesting of the same name. Answers
   * synchronously when the store does. Several names (canonical order, as
   * `assertLockNames` returns them): all or none.
   */
  enter<R>(
    name: string | readonly string[],
    options: ResolvedCallOptions,
    next: (entry: LockEntry | undefined) => MaybePromise<R>,
  ): MaybePromise<R>;
  /** Whether anyone listens to events: build an event only then. */
  readonly observed: boolean;
  /** Hands an event to the listeners; never throws. */
  emit(event: LockEvent): void;
  /** Logs a store failure at `level`, once per cause and interval. */
  logStoreFailure(level: 'warn' | 'error', error: unknown, line: string): void;
  /**
   * Waits, without bound until `signal` aborts, for the lock under an owner
   * token that names `instanceId` (readable through the store's `holder()`).
   * Resolves `null` when aborted. Leader election campaigns with it.
   */
  acquireAs(
    name: string,
    instanceId: string,
    options: LockCallOptions & { signal: AbortSignal },
  ): Promise<HeldLock | null>;
  /** The locks the manager holds now. */
  heldLocks(): HeldLock[];
}
