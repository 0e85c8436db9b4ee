import { AsyncLocalStorage } from 'node:async_hooks';
import type { LockHandle } from './lock-handle.js';

/** The locks held by the current async call chain, innermost last. @internal */
export interface LockScope {
  readonly handles: ReadonlyMap<string, LockHandle>;
  readonly innermost: LockHandle;
}

/** @internal */
export const lockScope = new AsyncLocalStorage<LockScope>();

/** Scope key: the same name in two managers (two apps in one process) is two locks. @internal */
export const scopeKey = (managerId: number, key: string): string => `${managerId}\u0000${key}`;

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
  if (!scope) return undefined;
  if (name === undefined) return scope.innermost;
  let found: LockHandle | undefined;
  for (const handle of scope.handles.values()) if (handle.name === name) found = handle;
  return found;
}
