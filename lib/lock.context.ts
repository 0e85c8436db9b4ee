import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockHandle } from './lock-handle.js';

/**
 * The locks held by the current async call chain, as a linked list from the
 * innermost outwards (a chain is a few locks deep: a walk is cheaper than a
 * Map copy per acquisition). @internal
 */
export interface LockScope {
  readonly handle: LockHandle;
  /** The manager that took it: the same key in two managers (two apps in one process) is two locks. */
  readonly managerId: number;
  readonly parent: LockScope | undefined;
}

/** @internal */
export const lockScope = new AsyncLocalStorage<LockScope>();

/** The handle for `key` of manager `managerId` in the current chain. @internal */
export function findInScope(scope: LockScope | undefined, managerId: number, key: string): LockHandle | undefined {
  for (let s = scope; s; s = s.parent) if (s.managerId === managerId && s.handle.key === key) return s.handle;
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
  if (name === undefined) return scope?.handle;
  for (let s = scope; s; s = s.parent) if (s.handle.name === name) return s.handle;
  return undefined;
}
