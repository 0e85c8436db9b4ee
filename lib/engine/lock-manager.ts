import { FENCE_BLOCK, LockCohort, type CohortHost, type CohortWaiter } from './lock-cohort.js';
import { HeldLock, type HeldLockContext, type LockHandle } from './lock-handle.js';
import { findInScope, lockScope, type LockEntry, type LockScope } from './lock-context.js';
import { LockAcquireError, LockError, LockOptionsError, LockReentryError, LockStoreError } from '../errors/lock.errors.js';
import type { LockEvent, LockOutcome } from '../contract/lock-events.interface.js';
import { silentLogger, type LockLogger } from '../contract/lock-logger.interface.js';
import { LogWindow } from './lock-log-window.js';
import {
  closedWhileWaitingMessage,
  grantedAfterCloseMessage,
  heldSkippedLog,
  heldSummaryLog,
  heldThrownLog,
  notAFunctionMessage,
  onEventThrewLog,
  requestedAfterCloseMessage,
  storeFailuresSummaryLog,
} from '../errors/lock.messages.js';
import type { LockCallOptions, LockModuleOptions, OnHeld } from '../contract/lock-options.interface.js';
import { assertCallOptions, assertLockName, assertModuleOptions } from './lock-options.validation.js';
import { isThenable, type LockGrant, type LockProvider, type MaybePromise } from '../contract/lock-provider.js';
import { TimedList } from '../shared/timer.js';
import { InstanceOwnerTokens, instanceIdOf, newOwnerToken, ownerTokenFor } from '../shared/owner-token.js';
import { defaultInstanceId } from '../leader/leader-election.js';
import { startTelemetry } from '../telemetry/lock-telemetry.js';
import { inspectLocks } from '../inspection/lock-inspection.js';
import type { LockInspectOptions, LockInspection } from '../inspection/inspected-lock.interface.js';
import { now } from '../shared/clock.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_TTL } from '../contract/lock.constants.js';


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
  /** Name this instance in the owner token, so that the store's `holder()` can tell who holds the lock (leader election). */
  instanceId?: string;
  label?: string;
}

export type { LockEntry } from './lock-context.js';

/** The entry of a call nested in a call that holds the same lock (`reentrant: true`): runs inside the outer scope, releases nothing. */
class ReenteredEntry implements LockEntry {
  constructor(readonly handle: LockHandle) {}
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    return fn(...args);
  }
  exit(): boolean {
    return false;
  }
}

/** A caller waiting in this process, behind this process's own holder or store waiter for the same key. */
class LocalWaiter implements CohortWaiter {
  timer: ReturnType<typeof setTimeout> | undefined;
  onAbort: (() => void) | undefined;
  constructor(
    readonly seq: number,
    readonly name: string,
    readonly key: string,
    readonly options: ResolvedCallOptions,
    readonly scope: LockScope | undefined,
    readonly requestedAt: number,
    readonly settle: (lock: HeldLock | null) => void,
    readonly fail: (error: unknown) => void,
  ) {}
  get ttl(): number {
    return this.options.ttl;
  }
  get renew(): boolean {
    return this.options.renew;
  }
  /** Stops its own timeout and abort listener (it left the local queue). */
  done(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.onAbort) this.options.signal?.removeEventListener('abort', this.onAbort);
  }
}

let nextManagerId = 1;
/** Longest wait of `close()` for tries in flight, in ms. */
const CLOSE_DRAIN_MS = 10_000;
const asIs = <T>(value: T): T => value;
/** A lock that a waiter of this process got after queueing here: it waited. */
const queuedHere = (lock: HeldLock | null): HeldLock | null => {
  if (lock) lock.queued = true;
  return lock;
};
/** How often repeated log lines (a held lock, a store failure of the same cause) are summarized, in ms. */
const LOG_INTERVAL_MS = 60_000;

/** What a store failure is keyed by in the log window: its cause, without the lock or key it hit. */
function failureKey(error: unknown): string {
  const detail = error instanceof LockStoreError ? error.detail : error instanceof Error ? error.message : String(error);
  return detail.replace(/ \(key ".*$/s, '');
}

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
  /** Event listeners (`onEvent`, telemetry, the lock page): an empty list costs the lock path nothing. */
  private listeners: ReadonlyArray<(event: LockEvent) => void> = [];
  /** Whether anyone listens to events. */
  private observed = false;
  /** This process's instance id (module option `instanceId`), as inspection reports its own locks. */
  private readonly instanceId: string;
  /** Owner tokens that name `instanceId`, when the module option set it (so other instances' `inspect()` can tell who holds a lock). */
  private readonly namedTokens: InstanceOwnerTokens | undefined;
  private readonly id = nextManagerId++;
  /** The locks this manager holds (an intrusive list; also what calls them back for renewal). */
  private readonly held = new TimedList();
  private readonly context: HeldLockContext;
  private closed = false;
  /** Tries (no waiting) whose store call is in flight: `close()` lets them finish and release what they got. */
  private tries = 0;
  private drained: (() => void) | undefined;
  /** Per key, the callers of this process (see `localHandOff`); `undefined` when off or the store reserves no fencing tokens. */
  private readonly cohorts: Map<string, LockCohort<LocalWaiter>> | undefined;
  /** Arrival counter of local waiters: a store grant's batch is the waiters that came before it. */
  private arrivals = 0;
  private readonly cohortHost: CohortHost<LocalWaiter>;
  /** A held lock is a normal outcome: one debug line per name and interval, then a count. */
  private readonly heldSkips = new LogWindow(LOG_INTERVAL_MS, (name, n, s) => this.logger.debug(heldSummaryLog(name, 'skipped', n, s)));
  private readonly heldThrows = new LogWindow(LOG_INTERVAL_MS, (name, n, s) => this.logger.debug(heldSummaryLog(name, 'refused', n, s)));
  /** Store failures: one line per cause and interval, then a count. */
  private readonly storeFailures = new LogWindow(LOG_INTERVAL_MS, (key, n, s) => this.logger.warn(storeFailuresSummaryLog(key.slice(key.indexOf(' ') + 1), n, s)));

  constructor(options: LockManagerOptions) {
    const { provider, logger, ...rest } = options;
    assertModuleOptions(rest);
    this.provider = provider;
    this.logger = logger ?? silentLogger;
    this.keyPrefix = rest.keyPrefix ?? DEFAULT_KEY_PREFIX;
    // The in-memory store's test helpers (hold, isHeld) take lock names: tell it the prefix.
    (provider as { useKeyPrefix?: (prefix: string) => void }).useKeyPrefix?.(this.keyPrefix);
    this.defaults = {
      ttl: rest.ttl ?? DEFAULT_TTL,
      onHeld: rest.onHeld ?? 'throw',
      waitTimeout: rest.waitTimeout,
      renew: rest.renew ?? true,
      maxHold: rest.maxHold,
      reentrant: false,
      failOpen: false,
    };
    this.instanceId = rest.instanceId ?? defaultInstanceId();
    this.namedTokens = rest.instanceId === undefined ? undefined : new InstanceOwnerTokens(rest.instanceId);
    this.context = {
      provider,
      logger: this.logger,
      emit: (event) => this.emit(event),
      held: this.held,
      managerId: this.id,
      observed: false,
      logStoreFailure: (level, error, line) => this.logStoreFailure(level, error, line),
    };
    if (rest.onEvent) this.subscribe(rest.onEvent);
    startTelemetry(this, rest.telemetry, this.logger);
    this.cohorts = (rest.localHandOff ?? true) && provider.fenceBlocks === true ? new Map() : undefined;
    this.cohortHost = {
      handTo: (waiter, from, fencingToken, leaseMs, cohort) => this.handTo(waiter, from, fencingToken, leaseMs, cohort),
      toStore: (waiter, cohort) => this.sendToStore(waiter, cohort),
      idle: (cohort) => {
        if (this.cohorts?.get(cohort.key) === cohort) this.cohorts.delete(cohort.key);
      },
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
    const key = this.keyPrefix + name;
    if (this.observed) return this.watch(name, resolved, false, () => this.take(name, key, resolved, false, undefined, asIs), asIs);
    return this.take(name, key, resolved, false, undefined, asIs);
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
    const key = this.keyPrefix + name;
    if (this.observed) {
      return this.watch(name, resolved, true, () => this.take(name, key, resolved, true, undefined, asIs), (l) => l ?? this.throwWaitFailed(name, resolved, started));
    }
    const handle = await this.take(name, key, resolved, true, undefined, asIs);
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
    if (typeof fn !== 'function') throw new LockOptionsError(notAFunctionMessage(`withLock("${name}")`));
    assertCallOptions(options, `withLock("${name}")`);
    // Awaits only what is a promise: an in-memory store answers at once, and every skipped turn counts.
    const entering = this.enter(name, this.resolve(options));
    const entry = isThenable(entering) ? await entering : entering;
    if (!entry) return undefined;
    try {
      const result = entry.run(fn, entry.handle);
      return isThenable(result) ? await result : result;
    } finally {
      const exited = entry.exit();
      if (isThenable(exited)) await exited;
    }
  }

  /**
   * The handle of the lock held by the current call chain: the innermost, or
   * the one named `name`. `undefined` outside a locked call.
   */
  current(name?: string): LockHandle | undefined {
    const scope = lockScope.getStore();
    if (name !== undefined) return findInScope(scope, this.id, this.keyPrefix + name);
    return scope;
  }

  /**
   * Adds an event listener (like the `onEvent` option); returns a function
   * that removes it. Listeners must not throw: errors are logged and ignored.
   * With no listener, events cost the lock path nothing.
   */
  subscribe(listener: (event: LockEvent) => void): () => void {
    this.listeners = [...this.listeners, listener];
    this.observed = this.context.observed = true;
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
      this.observed = this.context.observed = this.listeners.length > 0;
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
        localWaiters: (key) => this.cohorts?.get(key)?.waiting.length ?? 0,
      },
      options,
    );
  }

  /** The locks this manager holds now (for telemetry and inspection). @internal */
  heldLocks(): HeldLock[] {
    return this.held.members() as HeldLock[];
  }

  /** Releases every lock this manager still holds and stops their renewal. */
  async releaseAll(): Promise<void> {
    await Promise.all(this.held.members().map((lock) => (lock as HeldLock).release()));
  }

  /**
   * Refuses new locks from now on, lets acquisitions already sent to the
   * store (without waiting) finish (up to 10 s) and releases what they got,
   * then releases the held locks. Does not close the provider (so these releases still
   * reach the store); waiters still queued are the provider's to end.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const cohort of this.cohorts?.values() ?? []) {
      for (const waiter of [...cohort.waiting]) {
        cohort.remove(waiter);
        waiter.done();
        waiter.fail(new LockError(closedWhileWaitingMessage(waiter.name), { lockName: waiter.name }));
      }
    }
    if (this.tries > 0) {
      // Bounded: the built-in stores answer within their command timeout; a store that never answers must not hang shutdown.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        timer = setTimeout(resolve, CLOSE_DRAIN_MS);
        timer.unref?.();
      });
      clearTimeout(timer);
      this.drained = undefined;
    }
    await this.releaseAll();
    for (const window of [this.heldSkips, this.heldThrows, this.storeFailures]) window.flush();
  }

  /**
   * Logs a store failure at `level`, once per cause and interval: while the
   * store is down, the repeats (every call, every cron tick) are counted and
   * summarized once a minute. @internal
   */
  protected logStoreFailure(level: 'warn' | 'error', error: unknown, line: string): void {
    if (this.storeFailures.first(`${level}: ${failureKey(error)}`)) this.logger[level](line);
  }

  /**
   * Waits, without bound until `signal` aborts, for the lock under an owner
   * token that names `instanceId` (readable through the store's `holder()`).
   * Resolves `null` when aborted. Leader election campaigns with it. @internal
   */
  async acquireAs(name: string, instanceId: string, options: LockCallOptions & { signal: AbortSignal }): Promise<HeldLock | null> {
    assertLockName(name, 'acquireAs()');
    const resolved: ResolvedCallOptions = { ...this.resolve(options), onHeld: 'wait', waitTimeout: undefined, instanceId };
    return this.take(name, this.keyPrefix + name, resolved, true, undefined, asIs);
  }

  /** `true` once `close()` was called. */
  protected get closing(): boolean {
    return this.closed;
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
      label: options.label,
    };
  }

  /**
   * Takes the lock for a scoped call, following `onHeld`. Resolves
   * `undefined` when skipped. Detects nesting of the same name. Answers
   * synchronously when the store does. @internal
   */
  enter(name: string, options: ResolvedCallOptions): MaybePromise<LockEntry | undefined> {
    const key = this.keyPrefix + name;
    const scope = lockScope.getStore();
    const outer = scope && findInScope(scope, this.id, key);
    if (outer?.held) {
      if (!options.reentrant) throw new LockReentryError(name);
      return new ReenteredEntry(outer);
    }
    const wait = options.onHeld === 'wait';
    if (this.observed) {
      const started = now();
      return this.watch(name, options, wait, () => this.take(name, key, options, wait, scope, asIs), (lock) => this.entered(name, options, started, lock));
    }
    const started = wait ? now() : 0;
    return this.take(name, key, options, wait, scope, (lock) => this.entered(name, options, started, lock));
  }

  /**
   * `take`, observed: a `waiting` event before a call that may wait, and an
   * `answered` event with its outcome after it, both in the caller's async
   * context (so telemetry sees the caller's active span). Only runs when
   * someone listens.
   */
  private watch<R>(name: string, o: ResolvedCallOptions, wait: boolean, take: () => MaybePromise<HeldLock | null>, then: (lock: HeldLock | null) => R): MaybePromise<R> {
    const started = now();
    if (wait) this.emit({ type: 'waiting', name, label: o.label });
    let lock: MaybePromise<HeldLock | null>;
    try {
      lock = take();
    } catch (err) {
      this.answer(name, o, wait, started, null, err);
      throw err;
    }
    if (!isThenable(lock)) {
      this.answer(name, o, wait, started, lock);
      return then(lock);
    }
    return lock.then(
      (l) => {
        this.answer(name, o, wait, started, l);
        return then(l);
      },
      (err: unknown) => {
        this.answer(name, o, wait, started, null, err);
        throw err;
      },
    );
  }

  /** Emits the `answered` event of a call. */
  private answer(name: string, o: ResolvedCallOptions, wait: boolean, started: number, lock: HeldLock | null, error?: unknown): void {
    let outcome: LockOutcome;
    if (lock) outcome = 'acquired';
    else if (error instanceof LockStoreError) outcome = 'store-error';
    else if (o.signal?.aborted) outcome = 'aborted';
    else if (error === undefined) outcome = wait ? 'timeout' : 'held';
    // A wait that ran out, or one ended by the application's shutdown.
    else outcome = error instanceof LockAcquireError && error.reason === 'timeout' ? 'timeout' : 'aborted';
    this.emit({
      type: 'answered',
      name,
      label: o.label,
      wait,
      outcome,
      waitMs: now() - started,
      queued: lock?.queued ?? false,
      fencingToken: lock?.fencingToken,
    });
  }

  /** `enter` once the store answered: the entry, or the `onHeld` policy for a lock held elsewhere. */
  private entered(name: string, options: ResolvedCallOptions, started: number, lock: HeldLock | null): LockEntry | undefined {
    if (lock) return lock;
    if (options.onHeld === 'wait') throw this.waitFailed(name, options, started);
    this.emit({ type: 'contended', name, onHeld: options.onHeld });
    if (options.onHeld === 'skip') {
      if (this.heldSkips.first(name)) this.logger.debug(heldSkippedLog(name));
      this.emit({ type: 'skipped', name, reason: 'held' });
      return undefined;
    }
    if (this.heldThrows.first(name)) this.logger.debug(heldThrownLog(name));
    throw new LockAcquireError(name, 'held');
  }

  private throwWaitFailed(name: string, options: ResolvedCallOptions, started: number): never {
    throw this.waitFailed(name, options, started);
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

  /**
   * Takes the lock; `then` maps the lock (or `null`: held) within the same
   * promise turn. A key that a caller of this process already holds or waits
   * for at the store (see `localHandOff`): a waiter queues here behind it,
   * and a try answers "held" at once while a caller of this process holds it.
   */
  private take<R>(
    name: string,
    key: string,
    o: ResolvedCallOptions,
    wait: boolean,
    scope: LockScope | undefined,
    then: (lock: HeldLock | null) => R,
  ): MaybePromise<R> {
    if (this.closed) {
      throw new LockError(requestedAfterCloseMessage(name), { lockName: name });
    }
    const cohorts = this.cohorts;
    if (cohorts !== undefined) {
      let cohort = cohorts.get(key);
      if (cohort?.busy) {
        if (wait) return this.waitHere(cohort, name, key, o, scope).then(then);
        // Held here, on a lease this process counts: "held" is the answer, without the store.
        if (cohort.holds) return then(null);
      } else if (wait) {
        if (!cohort) cohorts.set(key, (cohort = new LockCohort(key, this.cohortHost)));
        cohort.toStore();
        return this.ask(name, key, o, true, scope, then, cohort, now());
      }
    }
    return this.ask(name, key, o, wait, scope, then, undefined, now());
  }

  /** Asks the store. `cohort`: the caller is this process's one at the store for the key, and reports back to it. */
  private ask<R>(
    name: string,
    key: string,
    o: ResolvedCallOptions,
    wait: boolean,
    scope: LockScope | undefined,
    then: (lock: HeldLock | null) => R,
    cohort: LockCohort<LocalWaiter> | undefined,
    requestedAt: number,
  ): MaybePromise<R> {
    const owner = o.instanceId !== undefined ? ownerTokenFor(o.instanceId) : this.namedTokens !== undefined ? this.namedTokens.next() : newOwnerToken();
    let grant: MaybePromise<LockGrant | null>;
    try {
      grant = this.provider.acquire({
        key,
        owner,
        ttl: o.ttl,
        wait,
        waitTimeout: o.waitTimeout,
        signal: o.signal,
        // Waiters only: callers of this process queue behind a waiting caller's grant; a try's grant stays its own.
        fences: wait && this.cohorts ? FENCE_BLOCK : undefined,
      });
    } catch (err) {
      cohort?.fromStore(true);
      throw this.acquireFailed(name, err);
    }
    if (!isThenable(grant)) {
      const lock = this.granted(name, key, owner, o, requestedAt, scope, grant, cohort);
      return isThenable(lock) ? lock.then(then) : then(lock);
    }
    if (!wait) this.tries++;
    return grant.then(
      (g) => {
        if (!wait) this.triedOne();
        const lock = this.granted(name, key, owner, o, requestedAt, scope, g, cohort);
        return isThenable(lock) ? lock.then(then) : then(lock);
      },
      (err: unknown) => {
        if (!wait) this.triedOne();
        cohort?.fromStore(true);
        throw this.acquireFailed(name, err);
      },
    );
  }

  /** Queues a waiter behind this process's own holder or store waiter for the key. */
  private waitHere(cohort: LockCohort<LocalWaiter>, name: string, key: string, o: ResolvedCallOptions, scope: LockScope | undefined): Promise<HeldLock | null> {
    return new Promise<HeldLock | null>((resolve, reject) => {
      // Already aborted, or no wait allowed: like a store asked to try once, the answer is "held".
      if (o.signal?.aborted || o.waitTimeout === 0) return resolve(null);
      const waiter = new LocalWaiter(this.arrivals++, name, key, o, scope, now(), resolve, reject);
      cohort.enqueue(waiter);
      const leave = (): void => {
        if (!cohort.remove(waiter)) return;
        waiter.done();
        resolve(null);
      };
      if (o.waitTimeout !== undefined) waiter.timer = setTimeout(leave, o.waitTimeout);
      if (o.signal) {
        waiter.onAbort = leave;
        o.signal.addEventListener('abort', leave, { once: true });
      }
    });
  }

  /** A local hand-off: `waiter` takes over the store's grant that `from` held, with a reserved fencing token. */
  private handTo(waiter: LocalWaiter, from: HeldLock, fencingToken: number, leaseMs: number, cohort: LockCohort<LocalWaiter>): boolean {
    waiter.done();
    let lock: MaybePromise<HeldLock | null>;
    try {
      // The store's lease as it is: it ends when `from`'s did (leaseMs was measured a moment earlier).
      const t = now();
      lock = this.granted(waiter.name, waiter.key, from.owner, waiter.options, waiter.requestedAt, waiter.scope, {
        fencingToken,
        queued: true,
        leaseStartedAt: t,
        leaseMs: Math.min(leaseMs, from.leaseEnd - t),
      });
    } catch (err) {
      waiter.fail(err);
      return false;
    }
    // Not closed (close() empties the local queues first), so the lock is there at once.
    const held = lock as HeldLock;
    held.cohort = cohort;
    cohort.hold(held);
    waiter.settle(held);
    return true;
  }

  /** A local waiter's turn to queue at the store (its process no longer holds the key), with what is left of its wait. */
  private sendToStore(waiter: LocalWaiter, cohort: LockCohort<LocalWaiter>): void {
    waiter.done();
    const o = waiter.options;
    const options = o.waitTimeout === undefined ? o : { ...o, waitTimeout: Math.max(0, o.waitTimeout - (now() - waiter.requestedAt)) };
    try {
      const lock = this.ask(waiter.name, waiter.key, options, true, waiter.scope, queuedHere, cohort, waiter.requestedAt);
      if (isThenable(lock)) lock.then(waiter.settle, waiter.fail);
      else waiter.settle(lock);
    } catch (err) {
      waiter.fail(err);
    }
  }

  private triedOne(): void {
    if (--this.tries === 0 && this.drained) {
      // Let the late grant's release (in granted()) start before close() goes on.
      const drained = this.drained;
      this.drained = undefined;
      queueMicrotask(drained);
    }
  }

  /**
   * The lock for a grant (`null`: none). A store grant with reserved fencing
   * tokens makes the lock its cohort's holder; a caller counted at the store
   * (`atStore`) reports back to its cohort.
   */
  private granted(
    name: string,
    key: string,
    owner: string,
    o: ResolvedCallOptions,
    requestedAt: number,
    scope: LockScope | undefined,
    grant: LockGrant | null,
    atStore?: LockCohort<LocalWaiter>,
  ): MaybePromise<HeldLock | null> {
    try {
      if (!grant) return null;
      const lock = new HeldLock(name, key, owner, grant.fencingToken, o, this.context, grant.leaseStartedAt ?? requestedAt, grant.leaseMs ?? o.ttl, scope);
      if (grant.queued) lock.queued = true;
      if (this.closed) {
        return lock.release().then(() => {
          throw new LockError(grantedAfterCloseMessage(name), { lockName: name });
        });
      }
      const fences = grant.fences ?? 1;
      if (this.cohorts && fences > 1) {
        let cohort = atStore ?? this.cohorts.get(key);
        if (!cohort) this.cohorts.set(key, (cohort = new LockCohort(key, this.cohortHost)));
        lock.cohort = cohort;
        cohort.hold(lock, { fencingToken: grant.fencingToken, fences, arrivals: this.arrivals });
      }
      if (grant.queued) this.emit({ type: 'contended', name, onHeld: o.onHeld });
      if (this.observed) this.emit({ type: 'acquired', name, label: o.label, fencingToken: grant.fencingToken, waitMs: now() - requestedAt });
      return lock;
    } finally {
      atStore?.fromStore(false);
    }
  }

  /** The error a caller gets for a failed acquire. Providers see keys, not names: put the lock name in. */
  private acquireFailed(name: string, err: unknown): Error {
    const error =
      err instanceof LockStoreError && err.lockName === undefined
        ? new LockStoreError(err.operation, err.detail, { lockName: name, cause: err.cause ?? err })
        : err instanceof LockError
          ? err
          : new LockStoreError('acquire', err instanceof Error ? err.message : String(err), { lockName: name, cause: err });
    this.emit({ type: 'store-error', name, operation: 'acquire', error });
    return error;
  }

  /** Hands an event to the listeners; never throws. @internal */
  emit(event: LockEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.logger.error(onEventThrewLog(event.type, event.name, err instanceof Error ? err.message : String(err)));
      }
    }
  }
}
