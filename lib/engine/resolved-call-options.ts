import type { LockCallOptions, LockMode, OnHeld } from '../contract/lock-options.interface.js';
import type { LockManagerOptions } from './lock-manager-options.interface.js';
import { DEFAULT_TTL } from '../contract/lock.constants.js';

/** Call options after defaults. @internal */
export interface ResolvedCallOptions {
  ttl: number;
  onHeld: OnHeld;
  waitTimeout?: number;
  renew: boolean;
  maxHold?: number;
  holdAtLeast?: number;
  reentrant: boolean;
  failOpen: boolean;
  /** A semaphore's permits; absent for 1 (a plain lock), so that only stores that support it see it. */
  limit?: number;
  /** `'shared'` for a read lock; absent for exclusive (the default). */
  mode?: LockMode;
  signal?: AbortSignal;
  /** Name this instance in the owner token, so that the store's `holder()` can tell who holds the lock (leader election). */
  instanceId?: string;
  label?: string;
}

/** The call defaults a manager's options set. @internal */
export function callDefaults(options: Omit<LockManagerOptions, 'provider'>): ResolvedCallOptions {
  return {
    ttl: options.ttl ?? DEFAULT_TTL,
    onHeld: options.onHeld ?? 'throw',
    waitTimeout: options.waitTimeout,
    renew: options.renew ?? true,
    maxHold: options.maxHold,
    reentrant: false,
    failOpen: false,
  };
}

/** Merges call options over the defaults. @internal */
export function resolveCallOptions(d: ResolvedCallOptions, options: LockCallOptions | undefined): ResolvedCallOptions {
  if (!options) return d;
  return {
    ttl: options.ttl ?? d.ttl,
    onHeld: options.onHeld ?? d.onHeld,
    waitTimeout: options.waitTimeout ?? d.waitTimeout,
    renew: options.renew ?? d.renew,
    maxHold: options.maxHold ?? d.maxHold,
    holdAtLeast: options.holdAtLeast,
    reentrant: options.reentrant ?? false,
    failOpen: options.failOpen ?? false,
    limit: options.limit !== undefined && options.limit > 1 ? options.limit : undefined,
    mode: options.mode === 'shared' ? 'shared' : undefined,
    signal: options.signal,
    label: options.label,
  };
}
