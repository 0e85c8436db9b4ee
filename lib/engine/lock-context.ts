import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockHandle } from './lock-handle.js';
import type { MaybePromise } from '../contract/lock-provider.js';

/**
 * A lock in the current async call chain; the chain is a linked list from
 * the innermost lock outwards (a chain is a few locks deep: a walk is cheaper
 * than a Map copy per acquisition). The held lock is its own scope node, so
 * entering a scope allocates nothing. @internal
 */
export interface LockScope extends LockHandle {
  /** The manager that took it: the same key in two managers (two apps in one process) is two locks. */
  readonly managerId: number;
  readonly parentScope: LockScope | undefined;
}

/**
 * A lock taken for a scoped call: run code inside its async scope (so nested
 * calls see it), then `exit` (release). The entry of a reentrant nested call
 * belongs to the outer call, and its `exit` does nothing. @internal
 */
export interface LockEntry {
  readonly handle: LockHandle;
  /** Calls `fn(...args)` inside the lock's scope (arguments are passed through, so no closure is needed). */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R;
  /** Releases; answers synchronously when the store does. Never throws. */
  exit(): MaybePromise<boolean>;
}

/** @internal */
export const lockScope = new AsyncLocalStorage<LockScope>();

/** The handle for `key` of manager `managerId` in the current chain. @internal */
export function findInScope(scope: LockScope | undefined, managerId: number, key: string): LockScope | undefined {
  for (let s = scope; s; s = s.parentScope) if (s.managerId === managerId && s.key === key) return s;
  return undefined;
}

/**
 * The handle of the lock held by the current call chain: the innermost one,
 * or the one named `name`. `undefined` outside a locked call.
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
  if (name === undefined) return scope;
  for (let s = scope; s; s = s.parentScope) if (s.name === name) return s;
  return undefined;
}
