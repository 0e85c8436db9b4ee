import { LockError, LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage, expected, inspectUnsupportedMessage } from '../errors/lock.messages.js';
import type { LockProvider } from '../contract/lock-provider.js';
import type { InspectedLock, LockInspectOptions, LockInspection } from './inspected-lock.interface.js';

/** Default and largest page of `inspect()`. */
export const DEFAULT_INSPECT_LIMIT = 100;
const MAX_INSPECT_LIMIT = 1_000;

/** A lock of this process, as inspection needs it. @internal */
export interface LocalLock {
  readonly key: string;
  readonly owner: string;
  readonly fencingToken: number;
  readonly acquiredAt: number;
  readonly label: string | undefined;
}

/** What inspection reads from the lock engine. @internal */
export interface InspectionSource {
  readonly provider: LockProvider;
  readonly keyPrefix: string;
  /** This process's instance id, if it has one. */
  readonly instanceId?: string;
  localLocks(): Iterable<LocalLock>;
  /** Callers of this process queued behind its own holder or store waiter for `key`. */
  localWaiters(key: string): number;
  /** The instance an owner token names, if any. */
  instanceOf?(owner: string): string | undefined;
}

/**
 * One page of the locks held now under the engine's key prefix: the store's
 * view, completed with what this process knows of its own locks (grant time,
 * exact fencing token, label, local waiters). Owner tokens stay inside. @internal
 */
export async function inspectLocks(
  source: InspectionSource,
  options: LockInspectOptions = {},
): Promise<LockInspection> {
  const limit = options.limit ?? DEFAULT_INSPECT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_INSPECT_LIMIT) {
    throw new LockOptionsError(optionMessage('inspect()', 'limit', expected.integerFrom1To(MAX_INSPECT_LIMIT), limit));
  }
  if (options.cursor !== undefined && typeof options.cursor !== 'string') {
    throw new LockOptionsError(optionMessage('inspect()', 'cursor', expected.inspectCursor, options.cursor));
  }
  const { provider, keyPrefix } = source;
  if (typeof provider.inspect !== 'function') {
    throw new LockError(inspectUnsupportedMessage(provider.kind));
  }
  const page = await provider.inspect({ prefix: keyPrefix, limit, cursor: options.cursor });
  const mine = new Map<string, LocalLock>();
  for (const lock of source.localLocks()) mine.set(lock.owner, lock);
  const wallNow = Date.now();
  const perfNow = performance.now();
  const locks = page.locks.map((stored): InspectedLock => {
    const local = mine.get(stored.owner);
    return {
      name: stored.key.slice(keyPrefix.length),
      mode: 'exclusive',
      permits: stored.permits,
      instanceId: source.instanceOf?.(stored.owner) ?? (local ? source.instanceId : undefined),
      mine: local !== undefined,
      label: local?.label,
      fencingToken: local?.fencingToken ?? stored.fencingToken,
      leaseRemainingMs: Math.max(0, Math.round(stored.remainingMs)),
      heldSince: local
        ? new Date(wallNow - (perfNow - local.acquiredAt))
        : stored.heldSince === undefined
          ? undefined
          : new Date(stored.heldSince),
      waiters: stored.waiters + source.localWaiters(stored.key),
    };
  });
  return page.cursor === undefined
    ? { store: provider.kind, locks }
    : { store: provider.kind, locks, cursor: page.cursor };
}
