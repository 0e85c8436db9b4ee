import type { HeldLock, HeldLockContext } from './held-lock.js';
import { LocalHandOff } from '../hand-off/local-hand-off.js';
import type { HandOffEvents } from '../hand-off/acquire-error.js';
import type { LockHandle } from './lock-handle.interface.js';
import { findInScope, lockScope, ReenteredEntry, type LockEntry } from './lock-context.js';
import { LockAcquirer } from './lock-acquirer.js';
import { LockOutcomes } from './lock-outcomes.js';
import type { LockEngine } from './lock-engine.interface.js';
import type { LockManagerOptions } from './lock-manager-options.interface.js';
import { callDefaults, resolveCallOptions, type ResolvedCallOptions } from './resolved-call-options.js';
import { assertCallOptions, assertLockName, assertLockNames, assertManagerOptions } from './lock-options.validation.js';
import { LockRequests } from './lock-requests.js';
import { MultiLockAcquirer } from './multi-lock-acquirer.js';
import { LockRenewals } from './lock-renewal.js';
import { runScoped } from './scoped-call.js';
import { defaultInstanceId } from './default-instance-id.js';
import { LockOptionsError, LockReentryError } from '../errors/lock.errors.js';
import { notAFunctionMessage, onEventThrewLog } from '../errors/lock.messages.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import { silentLogger, type LockLogger } from '../contract/lock-logger.interface.js';
import type { LockCallOptions } from '../contract/lock-options.interface.js';
import type { LockProvider, MaybePromise } from '../contract/lock-provider.js';
import { DEFAULT_KEY_PREFIX } from '../contract/lock.constants.js';
import { TimedList } from '../shared/timer.js';
import { InstanceOwnerTokens, instanceIdOf } from '../shared/owner-token.js';
import { now } from '../shared/clock.js';
import { startTelemetry } from '../telemetry/lock-telemetry.js';
import { inspectLocks } from '../inspection/lock-inspection.js';
import type { LockInspectOptions, LockInspection } from '../inspection/inspected-lock.interface.js';

export type { LockManagerOptions } from './lock-manager-options.interface.js';

let nextManagerId = 1;
/** How a call reads in a message: `withLock("a")`, `withLock(["a","b"])`. */
const callSite = (method: string, names: string | readonly string[]): string => `${method}(${JSON.stringify(names)})`;
const asIs = <T>(value: T): T => value;

/**
 * The lock engine, free of Nest: owner tokens, policies, waiting, lease
 * renewal, reentrancy detection and events on top of a {@link LockProvider}.
 * `LockService` is this engine as a Nest provider; use it directly in plain
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
  /** What `@Locked` and leader election use beyond the public API (see {@link LockEngine}). @internal */
  readonly engine: LockEngine;
  private readonly logger: LockLogger;
  private readonly defaults: ResolvedCallOptions;
  /** Event listeners (`onEvent`, telemetry, the lock page): an empty list costs the lock path nothing. */
  private listeners: ReadonlyArray<(event: LockEvent) => void> = [];
  /** This process's instance id (option `instanceId`), as inspection reports its own locks. */
  private readonly instanceId: string;
  private readonly id = nextManagerId++;
  /** The locks this manager holds (an intrusive list; also what calls them back for renewal). */
  private readonly held = new TimedList<HeldLock>();
  private readonly context: HeldLockContext;
  private readonly acquirer: LockAcquirer;
  private readonly outcomes: LockOutcomes;
  /** Takes several names as one lock. */
  private readonly multi: MultiLockAcquirer;
  /** Makes each call's request (store key, owner token). */
  private readonly requests: LockRequests;

  constructor(options: LockManagerOptions) {
    const { provider, logger, ...rest } = options;
    assertManagerOptions(rest);
    this.provider = provider;
    this.logger = logger ?? silentLogger;
    this.keyPrefix = rest.keyPrefix ?? DEFAULT_KEY_PREFIX;
    // The in-memory store's test helpers (hold, isHeld) take lock names: tell it the prefix.
    (provider as { useKeyPrefix?: (prefix: string) => void }).useKeyPrefix?.(this.keyPrefix);
    this.defaults = callDefaults(rest);
    this.instanceId = rest.instanceId ?? defaultInstanceId();
    const events: HandOffEvents = {
      get observed() {
        return context.observed;
      },
      emit: (event) => this.emit(event),
    };
    const context: HeldLockContext = {
      provider,
      logger: this.logger,
      emit: events.emit,
      held: this.held,
      renewals: new LockRenewals(provider),
      managerId: this.id,
      observed: false,
      logStoreFailure: (level, error, line) => this.outcomes.logStoreFailure(level, error, line),
      handOff: new LocalHandOff(provider, events, rest.localHandOff ?? true),
    };
    this.context = context;
    this.outcomes = new LockOutcomes(this.logger, this.context);
    this.acquirer = new LockAcquirer(context, context.handOff);
    this.requests = new LockRequests(provider, this.keyPrefix, new InstanceOwnerTokens(this.instanceId));
    this.multi = new MultiLockAcquirer(context, this.keyPrefix, this.outcomes, this.acquirer, this.requests);
    this.engine = this.internals();
    if (rest.onEvent) this.subscribe(rest.onEvent);
    const telemetry = startTelemetry(rest.telemetry, provider.kind, this.held, this.logger);
    if (telemetry) this.subscribe(telemetry);
  }

  /**
   * Takes the lock if it is free, else returns `null` at once. Release the
   * handle yourself (in `finally`). Several names: all of them, or none.
   * @throws {LockStoreError} when the store fails.
   */
  async tryAcquire(
    name: string | readonly string[],
    options?: Omit<LockCallOptions, 'onHeld' | 'waitTimeout'>,
  ): Promise<LockHandle | null> {
    const names = assertLockNames(name, 'tryAcquire()');
    assertCallOptions(options, () => callSite('tryAcquire', names));
    if (typeof names !== 'string') return this.multi.tryAcquire(names, this.resolve(options));
    const resolved = this.resolve(options);
    // A try never waits, whatever the manager's default onHeld.
    const req = this.requests.make(
      names,
      resolved.onHeld === 'wait' ? { ...resolved, onHeld: 'throw' } : resolved,
      undefined,
    );
    if (this.context.observed) return this.outcomes.watch(req, () => this.acquirer.take(req, asIs), asIs);
    return this.acquirer.take(req, asIs);
  }

  /**
   * Waits (FIFO) for the lock, up to `waitTimeout` ms when given. Release the
   * handle yourself (in `finally`). Several names: at once when free, else in turn, in sorted
   * order, within one `waitTimeout`.
   * @throws {LockAcquireError} when `waitTimeout` passes first.
   * @throws {LockStoreError} when the store fails.
   */
  async acquire(name: string | readonly string[], options?: Omit<LockCallOptions, 'onHeld'>): Promise<LockHandle> {
    const names = assertLockNames(name, 'acquire()');
    assertCallOptions(options, () => callSite('acquire', names));
    if (typeof names !== 'string') return this.multi.acquire(names, { ...this.resolve(options), onHeld: 'wait' });
    const req = this.requests.make(names, { ...this.resolve(options), onHeld: 'wait' }, undefined);
    const started = req.requestedAt;
    if (this.context.observed) {
      return this.outcomes.watch(
        req,
        () => this.acquirer.take(req, asIs),
        (lock) => {
          if (!lock) throw this.outcomes.waitFailed(req, started);
          return lock;
        },
      );
    }
    const handle = await this.acquirer.take(req, asIs);
    if (!handle) throw this.outcomes.waitFailed(req, started);
    return handle;
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
    try {
      // (the name of the last call was checked already: strings do not change)
      const names =
        typeof name === 'string' && name === this.requests.lastName ? name : assertLockNames(name, 'withLock()');
      if (typeof fn !== 'function') throw new LockOptionsError(notAFunctionMessage(callSite('withLock', names)));
      if (options !== undefined) assertCallOptions(options, () => callSite('withLock', names));
      // An in-memory store answers at once: no await before the section, and one promise (the section's own `then`) after it.
      return Promise.resolve(this.enter(names, this.resolve(options), (entry) => runScoped(entry, fn)));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * The handle of the lock held by the current call chain: the innermost, or
   * the one that holds `name` (a lock of several names is found by any of
   * them). `undefined` outside a locked call.
   */
  current(name?: string): LockHandle | undefined {
    const scope = lockScope.getStore();
    const lock = name === undefined ? scope : findInScope(scope, name, this.id);
    lock?.checkLease(); // (as currentLock())
    return lock;
  }

  /**
   * Adds an event listener (like the `onEvent` option); returns a function
   * that removes it. Listeners must not throw: errors are logged and ignored.
   * With no listener, events cost the lock path nothing.
   */
  subscribe(listener: (event: LockEvent) => void): () => void {
    this.listeners = [...this.listeners, listener];
    this.context.observed = true;
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
      this.context.observed = this.listeners.length > 0;
    };
  }

  /**
   * One page of the locks held now under this manager's key prefix, in every
   * process that shares the store: name, holder instance, fencing token,
   * lease left, grant time (when known) and waiters. Bounded: `limit` locks
   * per call (default 100), then pass the returned `cursor`.
   *
   * @example
   * ```ts
   * let page = await locks.inspect({ limit: 500 });
   * for (;;) {
   *   for (const lock of page.locks) console.log(lock.name, lock.instanceId, lock.leaseRemainingMs);
   *   if (!page.cursor) break;
   *   page = await locks.inspect({ limit: 500, cursor: page.cursor });
   * }
   * ```
   * @throws {LockStoreError} when the store fails.
   */
  inspect(options?: LockInspectOptions): Promise<LockInspection> {
    return inspectLocks(
      {
        provider: this.provider,
        keyPrefix: this.keyPrefix,
        instanceId: this.instanceId,
        instanceOf: instanceIdOf,
        localLocks: () => this.heldLocks(),
        localWaiters: (key) => this.context.handOff.localWaiters(key),
      },
      options,
    );
  }

  /** Releases every lock this manager still holds and stops their renewal. */
  async releaseAll(): Promise<void> {
    await Promise.all(this.heldLocks().map((lock) => lock.release()));
  }

  /**
   * Refuses new locks from now on, lets acquisitions already sent to the
   * store (without waiting) finish (up to 10 s) and releases what they got,
   * then releases the held locks. Does not close the provider (so these releases still
   * reach the store); waiters still queued are the provider's to end.
   */
  async close(): Promise<void> {
    await this.acquirer.close();
    await this.releaseAll();
    this.outcomes.flush();
  }

  /** The internals that `engine` hands out. */
  private internals(): LockEngine {
    const { provider, keyPrefix, logger, acquirer, outcomes, context } = this;
    return {
      provider,
      keyPrefix,
      logger,
      get closing() {
        return acquirer.closing;
      },
      get observed() {
        return context.observed;
      },
      resolve: (options) => this.resolve(options),
      enter: (name, options, next) => this.enter(name, options, next),
      emit: (event) => this.emit(event),
      logStoreFailure: (level, error, line) => outcomes.logStoreFailure(level, error, line),
      acquireAs: async (name, instanceId, options) => {
        assertLockName(name, 'acquireAs()');
        const resolved: ResolvedCallOptions = {
          ...this.resolve(options),
          onHeld: 'wait',
          waitTimeout: undefined,
          instanceId,
        };
        return this.acquirer.take(this.requests.make(name, resolved, undefined), asIs);
      },
      heldLocks: () => this.heldLocks(),
    };
  }

  private heldLocks(): HeldLock[] {
    return this.held.members();
  }

  private resolve(options: LockCallOptions | undefined): ResolvedCallOptions {
    return resolveCallOptions(this.defaults, options);
  }

  /** Takes the lock for a scoped call (see {@link LockEngine.enter}). */
  private enter<R>(
    name: string | readonly string[],
    options: ResolvedCallOptions,
    next: (entry: LockEntry | undefined) => MaybePromise<R>,
  ): MaybePromise<R> {
    if (typeof name !== 'string') return this.multi.enter(name, options).then(next);
    const scope = lockScope.getStore();
    const outer = scope && findInScope(scope, name, this.id);
    if (outer?.held) {
      if (!options.reentrant) throw new LockReentryError(name);
      return next(new ReenteredEntry(outer));
    }
    const req = this.requests.make(name, options, scope);
    if (this.context.observed) {
      const started = now();
      return this.outcomes.watch(
        req,
        () => this.acquirer.take(req, asIs),
        (lock) => next(this.outcomes.entered(req, started, lock)),
      );
    }
    return this.acquirer.take(req, (lock) => next(this.outcomes.entered(req, req.requestedAt, lock)));
  }

  /** Hands an event to the listeners; never throws. */
  private emit(event: LockEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.error(onEventThrewLog(event.type, event.name, err instanceof Error ? err.message : String(err)));
      }
    }
  }
}
