import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockHandle } from './lock-handle.interface.js';
import type { MaybePromise } from '../contract/lock-provider.js';

/**
 * A lock in the current async call chain, linked to the lock it was taken
 * in (see docs/engine.md, "Call-chain scope"). @internal
 */
export interface LockScope extends LockHandle {
  /** The manager that took it: the same key in two managers (two apps in one process) is two locks. */
  readonly managerId: number;
  readonly parentScope: LockScope | undefined;
  /** A lock of several names: its names (it is found by any of them). */
  readonly nameSet?: ReadonlySet<string>;
  /** Marks the lock lost when its lease is over, though no timer ran since (docs/engine.md, "Leases and renewal"). */
  checkLease(): void;
}

/**
 * A lock taken for a scoped call: `run` code inside its scope, then `exit`
 * (release). A reentrant nested call's entry releases nothing. @internal
 */
export interface LockEntry {
  readonly handle: LockHandle;
  /** Calls `fn(...args)` inside the lock's scope (arguments are passed through, so no closure is needed). */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R;
  /** Releases; answers synchronously when the store does. Never throws. */
  exit(): MaybePromise<boolean>;
  /** {@link exit}, then `next` of its answer, in the release's promise turn (one `then` for both). */
  exitThen<R>(next: (held: boolean) => MaybePromise<R>): MaybePromise<R>;
}

/** @internal */
export const lockScope = new AsyncLocalStorage<LockScope>();

/**
 * The innermost lock named `name` (or, of several names, holding `name`) in `scope` and its parents, taken by
 * manager `managerId` when given (else by any manager). @internal
 */
export function findInScope(scope: LockScope | undefined, name: string, managerId?: number): LockScope | undefined {
  for (let s = scope; s; s = s.parentScope) {
    if ((s.nameSet ? s.nameSet.has(name) : s.name === name) && (managerId === undefined || s.managerId === managerId))
      return s;
  }
  return undefined;
}

/**
 * The handle of the lock held by the current call chain: the innermost one,
 * or the one named `name`. `undefined` outside a locked call. It reads the
 * lease clock: a lock whose lease ran out while the process did not run is
 * marked lost at this call (its `held` is `false`, its `signal` aborted).
 *
 * @example
 * ```ts
 * @Locked('ledger')
 * async post(entry: Entry) {
 *   const lock = currentLock()!;
 *   await this.store.write(entry, lock.fencingToken);
 * }
 * ```
 */
export function currentLock(name?: string): LockHandle | undefined {
  const scope = lockScope.getStore();
  const lock = name === undefined ? scope : findInScope(scope, name);
  // The handle answers from its lease clock: a lock whose lease ran out while the process did not run is lost now.
  lock?.checkLease();
  return lock;
}

/** The entry of a call nested in a call that holds the same lock (`reentrant: true`): runs inside the outer scope, releases nothing. @internal */
export class ReenteredEntry implements LockEntry {
  constructor(readonly handle: LockHandle) {}
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    return fn(...args);
  }
  exit(): boolean {
    return false;
  }
  exitThen<R>(next: (held: boolean) => MaybePromise<R>): MaybePromise<R> {
    return next(false);
  }
}
