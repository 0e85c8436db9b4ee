import type { LockEvent } from '../contract/lock-events.interface.js';
import { LockError, LockStoreError } from '../errors/lock.errors.js';

/** Where the hand-off reports what it saw (the manager's events). @internal */
export interface HandOffEvents {
  /** Whether anyone listens to events. */
  readonly observed: boolean;
  emit(event: LockEvent): void;
}

/**
 * The error a caller gets for a failed acquire of `name` (a `store-error`
 * event goes out with it). Providers see keys, not names: a store error
 * without a lock name gets this one. @internal
 */
export function acquireError(events: HandOffEvents, name: string, err: unknown): Error {
  const error =
    err instanceof LockStoreError && err.lockName === undefined
      ? new LockStoreError(err.operation, err.detail, { lockName: name, cause: err.cause ?? err })
      : err instanceof LockError
        ? err
        : new LockStoreError('acquire', err instanceof Error ? err.message : String(err), {
            lockName: name,
            cause: err,
          });
  if (events.observed) events.emit({ type: 'store-error', name, operation: 'acquire', error });
  return error;
}
