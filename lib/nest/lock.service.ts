import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import type { LockModuleOptions } from './lock-module-options.interface.js';
import { CLOSES_LOCK_PROVIDER, SHARES_APP_CONNECTION } from './module-lock-store.js';
import { LockManager, type LockManagerOptions } from '../engine/lock-manager.js';
import { DEFAULTS_KEYS } from '../engine/lock-options.validation.js';
import type { LockHandle } from '../engine/lock-handle.interface.js';
import { LockProvider } from '../contract/lock-provider.js';
import type { LockCallOptions } from '../contract/lock-options.interface.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import type { LockInspectOptions, LockInspection } from '../inspection/inspected-lock.interface.js';
import { LockStoreError } from '../errors/lock.errors.js';
import {
  bootCheckFailedDetail,
  bootCheckFailedLog,
  inMemoryInProductionLog,
  setupRefusedBootDetail,
  storeOperations,
} from '../errors/lock.messages.js';
import { InMemoryLockProvider } from '../stores/memory/in-memory-lock.provider.js';

let warnedInMemoryInProduction = false;

/** The defaults of every call among the module's options (the engine's own list of them; the store options are not its). */
function managerDefaults(options: LockModuleOptions): Omit<LockManagerOptions, 'provider' | 'logger'> {
  const defaults: Record<string, unknown> = {};
  for (const key of DEFAULTS_KEYS) if (options[key] !== undefined) defaults[key] = options[key];
  return defaults;
}

/**
 * Takes and releases locks. Injectable anywhere once `LockModule` is
 * imported; `@Locked` uses it under the hood. In plain Node code, use
 * {@link LockManager}, the engine it wraps.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class Reports {
 *   constructor(private readonly locks: LockService) {}
 *
 *   rebuild() {
 *     return this.locks.withLock('reports:rebuild', (lock) => this.build(lock.signal), { onHeld: 'skip' });
 *   }
 * }
 * ```
 */
@Injectable()
export class LockService implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown, OnApplicationShutdown {
  /** The engine this service is, for `@Locked` and `LeaderService` (their way to its internals). @internal */
  readonly manager: LockManager;
  private readonly logger = new Logger(LockService.name);
  private readonly verifyOnBoot: 'warn' | 'fail' | false;

  /**
   * @param options - The module's options: the defaults of every call, and `verifyOnBoot`.
   * @param provider - The store.
   * @param closesProvider - Close `provider` on shutdown (and when the boot check stops the boot). `LockModule` passes `true` for a store it built from its options.
   * @param sharesAppConnection - Release the held locks in `onModuleDestroy`: `provider` runs on a connection the app owns. `LockModule` passes `false` for a store it built on a connection it opened; default: `!closesProvider`.
   */
  constructor(
    @Inject(LOCK_MODULE_OPTIONS) options: LockModuleOptions,
    provider: LockProvider,
    @Optional() @Inject(CLOSES_LOCK_PROVIDER) private readonly closesProvider: boolean = false,
    @Optional() @Inject(SHARES_APP_CONNECTION) private readonly sharesAppConnection: boolean = !closesProvider,
  ) {
    this.manager = new LockManager({ ...managerDefaults(options ?? {}), provider, logger: this.logger });
    this.verifyOnBoot = options?.verifyOnBoot ?? 'warn';
  }

  /** The store this service uses. */
  get provider(): LockProvider {
    return this.manager.provider;
  }

  /** Prefix of every store key. */
  get keyPrefix(): string {
    return this.manager.keyPrefix;
  }

  /**
   * Takes the lock if it is free, else returns `null` at once. Release the
   * handle yourself (in `finally`). Several names: all of them, or none.
   * @throws {LockStoreError} when the store fails.
   */
  tryAcquire(
    name: string | readonly string[],
    options?: Omit<LockCallOptions, 'onHeld' | 'waitTimeout'>,
  ): Promise<LockHandle | null> {
    return this.manager.tryAcquire(name, options);
  }

  /**
   * Waits (FIFO) for the lock, up to `waitTimeout` ms when given. Release the
   * handle yourself (in `finally`). Several names: each in turn, in sorted
   * order, within one `waitTimeout`.
   * @throws {LockAcquireError} when `waitTimeout` passes first.
   * @throws {LockStoreError} when the store fails.
   */
  acquire(name: string | readonly string[], options?: Omit<LockCallOptions, 'onHeld'>): Promise<LockHandle> {
    return this.manager.acquire(name, options);
  }

  /**
   * Runs `fn` under the lock and returns its result; releases in `finally`.
   * When the lock is held, follows `onHeld`: throws {@link LockAcquireError},
   * returns `undefined` without running `fn` (`'skip'`), or waits. Several
   * names: all or none, taken in sorted order (see {@link LockHandle.names}).
   *
   * @example
   * ```ts
   * await locks.withLock(`account:${id}`, () => recompute(id), { onHeld: 'wait', waitTimeout: 5_000 });
   * await locks.withLock([`account:${from}`, `account:${to}`], () => transfer(from, to, amount), { onHeld: 'wait' });
   * ```
   */
  withLock<T>(
    name: string | readonly string[],
    fn: (lock: LockHandle) => T | Promise<T>,
    options?: LockCallOptions,
  ): Promise<T | undefined> {
    return this.manager.withLock(name, fn, options);
  }

  /**
   * The handle of the lock held by the current call chain: the innermost, or
   * the one that holds `name` (a lock of several names is found by any of
   * them). `undefined` outside a locked call.
   */
  current(name?: string): LockHandle | undefined {
    return this.manager.current(name);
  }

  /**
   * Adds an event listener (like the `onEvent` option); returns a function
   * that removes it. Listeners must not throw: errors are logged and ignored.
   */
  subscribe(listener: (event: LockEvent) => void): () => void {
    return this.manager.subscribe(listener);
  }

  /**
   * One page of the locks held now under the module's key prefix, in every
   * instance that shares the store (see {@link LockManager.inspect}).
   * @throws {LockStoreError} when the store fails.
   */
  inspect(options?: LockInspectOptions): Promise<LockInspection> {
    return this.manager.inspect(options);
  }

  /** Releases every lock this instance still holds and stops their renewal. */
  releaseAll(): Promise<void> {
    return this.manager.releaseAll();
  }

  /**
   * Refuses new locks from now on, lets tries already sent to the store
   * finish and releases what they got, then releases the held locks (the
   * application's shutdown does this).
   */
  close(): Promise<void> {
    return this.manager.close();
  }

  /**
   * Checks at boot that the store works (one ping, bounded by
   * `commandTimeout`): logs one warning with the cause, or with
   * `verifyOnBoot: 'fail'` stops the boot; so does a store that refuses how
   * its server is set up (`evictionCheck: 'fail'` on a Redis that may evict), unless `verifyOnBoot` is `false`
   * (no check at all). Warns once when locks live in one
   * process's memory in production. Nest lifecycle hook.
   */
  async onModuleInit(): Promise<void> {
    const provider = this.provider;
    if (provider instanceof InMemoryLockProvider) {
      if (process.env.NODE_ENV === 'production' && !warnedInMemoryInProduction) {
        warnedInMemoryInProduction = true;
        this.logger.warn(inMemoryInProductionLog());
      }
      return;
    }
    if (this.verifyOnBoot === false) return;
    try {
      await provider.ping();
    } catch (err) {
      const cause = err instanceof LockStoreError ? err.detail : err instanceof Error ? err.message : String(err);
      // A store told to refuse how its server is set up (evictionCheck: 'fail') stops the boot with 'warn' as with 'fail'.
      const setup = provider.setupCheck?.();
      if (this.verifyOnBoot === 'fail' || setup?.refused) {
        // The boot stops: a connection the module opened must not keep reconnecting in the background.
        if (this.closesProvider) await provider.close();
        const detail = setup?.refused ? setupRefusedBootDetail(setup.problems) : bootCheckFailedDetail(cause);
        throw new LockStoreError(storeOperations.bootCheck, detail, { cause: err });
      }
      this.logger.warn(bootCheckFailedLog(cause));
    }
  }

  /**
   * Nest lifecycle hook: on a connection the app owns (its client, pool or
   * provider), releases the locks still held now, before another module's
   * `onModuleDestroy` can close it (docs/stores.md).
   */
  async onModuleDestroy(): Promise<void> {
    if (this.sharesAppConnection) await this.manager.close();
  }

  /** Nest lifecycle hook: releases the locks this instance still holds and stops their renewal. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.manager.close();
  }

  /** Nest lifecycle hook: closes the store if the module built it. */
  async onApplicationShutdown(): Promise<void> {
    if (this.closesProvider) await this.provider.close();
  }
}
