import { HeldLock, type HeldLockContext, type LockHandle } from './lock-handle.js';
import { findInScope, lockScope, type LockScope } from './lock.context.js';
import { LockAcquireError, LockError, LockOptionsError, LockReentryError, LockStoreError } from './lock.errors.js';
import type { LockEvent } from './lock-events.interface.js';
import { silentLogger, type LockLogger } from './lock-logger.interface.js';
import type { LockCallOptions, LockModuleOptions, OnHeld } from './lock-options.interface.js';
import { assertCallOptions, assertLockName, assertModuleOptions } from './lock-options.validation.js';
import type { LockProvider } from './lock-provider.interface.js';
import { newOwnerToken } from './owner-token.js';

/** Default lease, in ms. */
export const DEFAULT_TTL = 30_000;
/** Default key prefix. */
export const DEFAULT_KEY_PREFIX = 'lock:';

/** Settings of a {@link LockManager}: the module options, with the store resolved. */
export interface LockManagerOptions extends Omit<LockModuleOptions, 'provider'> {
  provider: LockProvider;
  logger?: LockLogger;
}

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
  signal?: AbortSignal;
}

/**
 * A lock taken for a scoped call: run code inside its async scope (so nested
 * calls see it), then release. `reentered` entries belong to an outer call,
 * and their `release` does nothing. @internal
 */
export interface LockEntry {
  readonly handle: LockHandle;
  readonly reentered: boolean;
  run<R>(fn: () => R): R;
  release(): Promise<boolean>;
}

/** A lock taken for a scoped call. @internal */
class ScopedEntry implements LockEntry {
  readonly reentered = false;
  constructor(
    readonly handle: HeldLock,
    private readonly scope: LockScope,
  ) {}
  run<R>(fn: () => R): R {
    return lockScope.run(this.scope, fn);
  }
  release(): Promise<boolean> {
    return this.handle.release();
  }
}

let nextManagerId = 1;
const now = (): number => performance.now();

/**
 * The lock engine, free of Nest: owner tokens, policies, waiting, lease
 * renewal, reentrancy detection and events on top of a {@link LockProvider}.
 * `LockService` is this class as a Nest provider; use it directly in plain
 * Node code.
 *
 * @example
 * ```ts
 * const locks = new LockManager({ provider: new InMemoryLockProvider() });
 * const total = await locks.withLock('report', () => buildReport());
 * ```
 */
export class LockManager {
  /** The store this manager uses. */
  readonly provider: LockProvider;
  /** Prefix of every store key. */
  readonly keyPrefix: string;
  protected readonly logger: LockLogger;
  private readonly defaults: ResolvedCallOptions;
  private readonly onEvent?: (event: LockEvent) => void;
  private readonly id = nextManagerId++;
  private readonly active = new Set<HeldLock>();
  private readonly context: HeldLockContext;
  private closed = false;

  constructor(options: LockManagerOptions) {
    const { provider, logger, ...rest } = options;
    assertModuleOptions(rest);
    this.provider = provider;
    this.logger = logger ?? silentLogger;
    this.keyPrefix = rest.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.onEvent = rest.onEvent;
    this.defaults = {
      ttl: rest.ttl ?? DEFAULT_TTL,
      onHeld: rest.onHeld ?? 'throw',
      waitTimeout: rest.waitTimeout,
      renew: rest.renew ?? true,
      maxHold: rest.maxHold,
      reentrant: false,
      failOpen: false,
    };
    this.context = {
      provider,
      logger: this.logger,
      emit: (event) => this.emit(event),
      onSettled: (lock) => this.active.delete(lock),
      observed: this.onEvent !== undefined,
    };
  }

  /**
   * Takes the lock if it is free, else returns `null` at once. Release the
   * handle yourself (in `finally`).
   * @throws {LockStoreError} when the store fails.
   */
  async tryAcquire(name: string, options?: Omit<LockCallOptions, 'onHeld' | 'waitTimeout'>): Promise<LockHandle | null> {
    assertLockName(name, 'tryAcquire()');
    assertCallOptions(options, `tryAcquire("${name}")`);
    const resolved = this.resolve(options);
    return this.take(name, resolved, false);
  }

  /**
   * Waits (FIFO) for the lock, up to `waitTimeout` ms when given. Release the
   * handle yourself (in `finally`).
   * @throws {LockAcquireError} when `waitTimeout` passes first.
   * @throws {LockStoreError} when the store fails.
   */
  async acquire(name: string, options?: Omit<LockCallOptions, 'onHeld'>): Promise<LockHandle> {
    assertLockName(name, 'acquire()');
    assertCallOptions(options, `acquire("${name}")`);
    const resolved = { ...this.resolve(options), onHeld: 'wait' as const };
    const started = now();
    const handle = await this.take(name, resolved, true);
    if (!handle) throw this.waitFailed(name, resolved, started);
    return handle;
  }

  /**
   * Runs `fn` under the lock and returns its result; releases in `finally`.
   * When the lock is held, follows `onHeld`: throws {@link LockAcquireError},
   * returns `undefined` without running `fn` (`'skip'`), or waits.
   *
   * @example
   * ```ts
   * await locks.withLock(`account:${id}`, () => recompute(id), { onHeld: 'wait', waitTimeout: 5_000 });
   * ```
   */
  async withLock<T>(name: string, fn: (lock: LockHandle) => T | Promise<T>, options?: LockCallOptions): Promise<T | undefined> {
    assertLockName(name, 'withLock()');
    if (typeof fn !== 'function') throw new LockOptionsError(`withLock("${name}"): the second argument must be a function.`);
    assertCallOptions(options, `withLock("${name}")`);
    const entry = await this.enter(name, this.resolve(options));
    if (!entry) return undefined;
    try {
      return await entry.run(() => fn(entry.handle));
    } finally {
      await entry.release();
    }
  }

  /**
   * The handle of the lock held by the current call chain: the innermost, or
   * the one named `name`. `undefined` outside a locked call.
   */
  current(name?: string): LockHandle | undefined {
    const scope = lockScope.getStore();
    if (name !== undefined) return findInScope(scope, this.id, this.keyPrefix + name);
    return scope?.handle;
  }

  /** Releases every lock this manager still holds and stops their renewal. */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.active].map((lock) => lock.release()));
  }

  /** Releases held locks, and refuses new ones from now on. Does not close the provider. */
  async close(): Promise<void> {
    this.closed = true;
    await this.releaseAll();
  }

  /** Merges call options over the defaults. @internal */
  resolve(options: LockCallOptions | undefined): ResolvedCallOptions {
    if (!options) return this.defaults;
    const d = this.defaults;
    return {
      ttl: options.ttl ?? d.ttl,
      onHeld: options.onHeld ?? d.onHeld,
      waitTimeout: options.waitTimeout ?? d.waitTimeout,
      renew: options.renew ?? d.renew,
      maxHold: options.maxHold ?? d.maxHold,
      holdAtLeast: options.holdAtLeast,
      reentrant: options.reentrant ?? false,
      failOpen: options.failOpen ?? false,
      signal: options.signal,
    };
  }

  /**
   * Takes the lock for a scoped call, following `onHeld`. Resolves
   * `undefined` when skipped. Detects nesting of the same name. @internal
   */
  async enter(name: string, options: ResolvedCallOptions): Promise<LockEntry | undefined> {
    const key = this.keyPrefix + name;
    const scope = lockScope.getStore();
    const outer = scope && findInScope(scope, this.id, key);
    if (outer?.held) {
      if (!options.reentrant) throw new LockReentryError(name);
      return { handle: outer, reentered: true, run: (fn) => fn(), release: async () => false };
    }
    const started = options.onHeld === 'wait' ? now() : 0;
    const handle = await this.take(name, options, options.onHeld === 'wait');
    if (!handle) {
      if (options.onHeld === 'wait') throw this.waitFailed(name, options, started);
      this.emit({ type: 'contended', name, onHeld: options.onHeld });
      if (options.onHeld === 'skip') {
        this.logger.debug(`Lock "${name}" is held elsewhere; skipped the call.`);
        this.emit({ type: 'skipped', name, reason: 'held' });
        return undefined;
      }
      this.logger.debug(`Lock "${name}" is held elsewhere; the call fails with LockAcquireError.`);
      throw new LockAcquireError(name, 'held');
    }
    return new ScopedEntry(handle, { handle, managerId: this.id, parent: scope });
  }

  private waitFailed(name: string, options: ResolvedCallOptions, started: number): Error {
    if (options.signal?.aborted) {
      const reason: unknown = options.signal.reason;
      return reason instanceof Error ? reason : new LockAcquireError(name, 'timeout', Math.round(now() - started));
    }
    const waitMs = Math.round(now() - started);
    this.emit({ type: 'timeout', name, waitMs });
    return new LockAcquireError(name, 'timeout', waitMs);
  }

  private async take(name: string, o: ResolvedCallOptions, wait: boolean): Promise<HeldLock | null> {
    if (this.closed) {
      throw new LockError(`Lock "${name}" was requested after the lock manager closed (application shutdown).`, { lockName: name });
    }
    const key = this.keyPrefix + name;
    const owner = newOwnerToken();
    const requestedAt = now();
    let grant;
    try {
      grant = await this.provider.acquire({ key, owner, ttl: o.ttl, wait, waitTimeout: o.waitTimeout, signal: o.signal });
    } catch (err) {
      // Providers see keys, not names: put the lock name into the error the caller gets.
      const error =
        err instanceof LockStoreError && err.lockName === undefined
          ? new LockStoreError(err.operation, err.detail, { lockName: name, cause: err.cause ?? err })
          : err instanceof LockError
            ? err
            : new LockStoreError('acquire', err instanceof Error ? err.message : String(err), { lockName: name, cause: err });
      this.emit({ type: 'store-error', name, operation: 'acquire', error });
      throw error;
    }
    if (!grant) return null;
    const lock = new HeldLock(name, key, owner, grant.fencingToken, o, this.context, grant.leaseStartedAt ?? requestedAt, grant.leaseMs);
    if (this.closed) {
      await lock.release();
      throw new LockError(`Lock "${name}" was granted after the lock manager closed (application shutdown); released it.`, { lockName: name });
    }
    this.active.add(lock);
    if (grant.queued) this.emit({ type: 'contended', name, onHeld: o.onHeld });
    if (this.onEvent) this.emit({ type: 'acquired', name, fencingToken: grant.fencingToken, waitMs: now() - requestedAt });
    return lock;
  }

  /** Hands an event to `onEvent`; never throws. */
  protected emit(event: LockEvent): void {
    if (!this.onEvent) return;
    try {
      this.onEvent(event);
    } catch (err) {
      this.logger.error(`onEvent threw for a "${event.type}" event of lock "${event.name}": ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
