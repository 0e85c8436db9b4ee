import type { LockMode } from './lock-options.interface.js';

/** What {@link LockProviderCapabilities.inspect} is asked: one page of the locks held under a prefix. */
export interface LockInspectRequest {
  /** Only keys that start with it (the module's `keyPrefix`). */
  readonly prefix: string;
  /** About this many locks per page (a store may answer a few more, never unboundedly many). */
  readonly limit: number;
  /** Where the previous page ended (its `cursor`); absent for the first page. */
  readonly cursor?: string;
}

/** A lock a store holds now, as the store sees it. */
export interface StoredLock {
  /** The store key (prefix included). */
  readonly key: string;
  /** The holder's owner token. Never shown to users: it can release the lock. */
  readonly owner: string;
  /** How many holders the key admits (1: an exclusive lock; a semaphore's `limit`). */
  readonly permits: number;
  /** How this holder holds the key: `'shared'` or `'exclusive'`. Absent: `'exclusive'`. */
  readonly mode?: LockMode;
  /**
   * The newest fencing token drawn for the key: the holder's, or up to 15
   * above it when the holder's grant reserved a block of tokens for callers
   * of its own process (see `localHandOff`).
   */
  readonly fencingToken: number;
  /** What is left of the lease, in ms, on the store's clock. */
  readonly remainingMs: number;
  /** When the lock was granted (epoch ms), when the store records it. */
  readonly heldSince?: number;
  /** Callers queued at the store for the key. */
  readonly waiters: number;
}

/** One page of {@link LockProviderCapabilities.inspect}. */
export interface LockInspectPage {
  readonly locks: StoredLock[];
  /** Pass it back for the next page; absent when this was the last. */
  readonly cursor?: string;
}
