import type { LockGrant } from '../../contract/lock-provider.js';
import { WaiterQueue } from './waiter-queue.js';

/** One holder of a key: its owner token, lease end, fencing token and grant time (for `inspect`). @internal */
export interface Holder {
  owner: string;
  expiresAt: number;
  fencingToken: number;
  grantedAt: number;
}

/** A caller queued for a key at the in-memory store. @internal */
export interface Waiter {
  readonly owner: string;
  readonly ttl: number;
  readonly shared: boolean;
  /** The exclusive limit it asked for (1 for shared waiters, unused). */
  readonly limit: number;
  readonly resolve: (grant: LockGrant | null) => void;
  timer?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * What the in-memory store keeps per key: its holders (all shared, or all
 * exclusive under one limit) and its FIFO queue. The first holder lives in
 * the state itself, so a plain lock costs one object; further holders
 * (semaphore permits, readers) go to `more`. Every holder but the first is
 * in `more`; `owner` is `undefined` only when there is no holder at all.
 * @internal
 */
export class KeyState {
  owner: string | undefined = undefined;
  expiresAt = 0;
  fencingToken = 0;
  grantedAt = 0;
  /** Holders after the first. */
  more: Holder[] | undefined = undefined;
  /** Whether the holders hold shared (else exclusive). */
  shared = false;
  /** The limit of the exclusive holders (1 for a plain lock). */
  limit = 1;
  readonly waiters = new WaiterQueue<Waiter>();
  /**
   * Wakes the head waiter when a holder's lease runs out; armed only while
   * someone waits, and not unref'd: that waiter's grant depends on it.
   */
  expiry: ReturnType<typeof setTimeout> | undefined = undefined;
  /** When {@link expiry} fires (performance.now() time). */
  expiryAt = 0;

  /** A key with its first holder. */
  constructor(
    owner: string,
    expiresAt: number,
    fencingToken: number,
    grantedAt: number,
    shared: boolean,
    limit: number,
  ) {
    this.add(owner, expiresAt, fencingToken, grantedAt, shared, limit);
  }

  /** How many holders the key has (expired ones included until {@link prune}). */
  get count(): number {
    return (this.owner === undefined ? 0 : 1) + (this.more === undefined ? 0 : this.more.length);
  }

  /** Whether a request of that mode and limit may hold together with the holders now. */
  admits(shared: boolean, limit: number): boolean {
    if (this.owner === undefined) return true;
    if (shared) return this.shared;
    return !this.shared && this.count < limit;
  }

  /**
   * The limit recorded for the key: the exclusive holders', else the first
   * exclusive waiter's; `undefined` when neither exists.
   */
  recordedLimit(): number | undefined {
    if (this.owner !== undefined && !this.shared) return this.limit;
    if (this.waiters.length === 0) return undefined;
    for (const w of this.waiters) if (!w.shared) return w.limit;
    return undefined;
  }

  /** Adds a holder; the key must admit it. */
  add(owner: string, expiresAt: number, fencingToken: number, grantedAt: number, shared: boolean, limit: number): void {
    if (this.owner === undefined) {
      this.owner = owner;
      this.expiresAt = expiresAt;
      this.fencingToken = fencingToken;
      this.grantedAt = grantedAt;
      this.shared = shared;
      this.limit = limit;
    } else (this.more ??= []).push({ owner, expiresAt, fencingToken, grantedAt });
  }

  /** The holder with that owner token, live or not. */
  find(owner: string): Holder | undefined {
    if (this.owner === owner) return this as Holder;
    return this.more?.find((h) => h.owner === owner);
  }

  /** Removes the holder `h` (from {@link find}). */
  remove(h: Holder): void {
    if (h !== (this as Holder)) {
      this.more!.splice(this.more!.indexOf(h), 1);
      return;
    }
    const next = this.more?.pop();
    if (next === undefined) {
      this.owner = undefined;
      return;
    }
    this.owner = next.owner;
    this.expiresAt = next.expiresAt;
    this.fencingToken = next.fencingToken;
    this.grantedAt = next.grantedAt;
  }

  /** Drops the holders whose lease ended by `t`; whether any was dropped. */
  prune(t: number): boolean {
    let dropped = false;
    if (this.more !== undefined) {
      const live = this.more.filter((h) => h.expiresAt > t);
      dropped = live.length < this.more.length;
      this.more = live.length > 0 ? live : undefined;
    }
    if (this.owner !== undefined && this.expiresAt <= t) {
      this.remove(this as Holder);
      dropped = true;
    }
    return dropped;
  }

  /** Every holder, the first one first. */
  holders(): Holder[] {
    if (this.owner === undefined) return [];
    const first = this as Holder;
    return this.more === undefined ? [first] : [first, ...this.more];
  }

  /** The earliest lease end among the holders (`Infinity` without holders). */
  nextExpiry(): number {
    let min = this.owner === undefined ? Infinity : this.expiresAt;
    if (this.more !== undefined) for (const h of this.more) min = Math.min(min, h.expiresAt);
    return min;
  }
}
