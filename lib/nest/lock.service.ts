import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { isObservable, Observable, defer, from, switchMap, EMPTY, finalize } from 'rxjs';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import { LockManager, type LockEntry, type ResolvedCallOptions } from '../engine/lock-manager.js';
import { isThenable, LockProvider, type MaybePromise } from '../contract/lock-provider.js';
import type { LockModuleOptions } from '../contract/lock-options.interface.js';
import { LockStoreError } from '../errors/lock.errors.js';
import { bootCheckFailedDetail, bootCheckFailedLog, inMemoryInProductionLog, scheduledFailOpenLog, scheduledShutdownLog, scheduledSkippedLog } from '../errors/lock.messages.js';
import { InMemoryLockProvider } from '../stores/memory/in-memory-lock.provider.js';
import { isOwnedProvider } from '../stores/lock-provider.factory.js';

let warnedInMemoryInProduction = false;

/** How a decorated method is to be locked. @internal */
export interface LockedInvocation {
  readonly name: string;
  readonly options: ResolvedCallOptions;
  /** A `@Cron`/`@Interval`/`@Timeout` task: store failures skip the tick (or run it with `failOpen`). */
  readonly scheduled: boolean;
  /** Declared to return an Observable: lock on subscribe, release on complete/error/unsubscribe. */
  readonly observable: boolean;
}

/**
 * Takes and releases locks. Injectable anywhere once `LockModule` is
 * imported; `@Locked` uses it under the hood.
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
export class LockService extends LockManager implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly verifyOnBoot: 'warn' | 'fail' | false;

  constructor(@Inject(LOCK_MODULE_OPTIONS) options: LockModuleOptions, provider: LockProvider) {
    const { provider: _given, verifyOnBoot = 'warn', ...rest } = options ?? {};
    super({ ...rest, provider, logger: new Logger(LockService.name) });
    this.verifyOnBoot = verifyOnBoot;
  }

  /**
   * Checks at boot that the store works (one ping, bounded by
   * `commandTimeout`): logs one warning with the cause, or with
   * `verifyOnBoot: 'fail'` stops the boot. Warns once when locks live in one
   * process's memory in production. @internal
   */
  async onModuleInit(): Promise<void> {
    if (this.provider instanceof InMemoryLockProvider) {
      if (process.env.NODE_ENV === 'production' && !warnedInMemoryInProduction) {
        warnedInMemoryInProduction = true;
        this.logger.warn(inMemoryInProductionLog());
      }
      return;
    }
    if (this.verifyOnBoot === false) return;
    try {
      await this.provider.ping();
    } catch (err) {
      const cause = err instanceof LockStoreError ? err.detail : err instanceof Error ? err.message : String(err);
      if (this.verifyOnBoot === 'fail') {
        // The boot stops: a connection the module opened must not keep reconnecting in the background.
        if (isOwnedProvider(this.provider)) await this.provider.close();
        throw new LockStoreError('the boot check', bootCheckFailedDetail(cause), { cause: err });
      }
      this.logger.warn(bootCheckFailedLog(cause));
    }
  }

  /** Releases the locks this instance still holds and stops their renewal. @internal */
  async beforeApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** Closes the store if the module built it. @internal */
  async onApplicationShutdown(): Promise<void> {
    if (isOwnedProvider(this.provider)) await this.provider.close();
  }

  /** Runs a `@Locked` method under its lock. @internal */
  invokeLocked(call: LockedInvocation, instance: unknown, method: (...args: unknown[]) => unknown, args: unknown[]): unknown {
    if (call.observable) {
      return defer(() => from(Promise.resolve(this.enterFor(call))).pipe(
        switchMap((entry) => {
          if (!entry) return EMPTY;
          if (entry === RUN_UNLOCKED) return method.apply(instance, args) as Observable<unknown>;
          let inner: Observable<unknown>;
          try {
            inner = entry.run(Reflect.apply, method, instance, args) as Observable<unknown>;
          } catch (err) {
            void entry.exit();
            throw err;
          }
          return (isObservable(inner) ? inner : from(Promise.resolve(inner))).pipe(finalize(() => void entry.exit()));
        }),
      ));
    }
    return this.invokeAsync(call, instance, method, args);
  }

  private async invokeAsync(call: LockedInvocation, instance: unknown, method: (...args: unknown[]) => unknown, args: unknown[]): Promise<unknown> {
    const entering = this.enterFor(call);
    const entry = isThenable(entering) ? await entering : entering;
    if (!entry) return undefined;
    if (entry === RUN_UNLOCKED) return method.apply(instance, args);
    let handedOver = false;
    try {
      const result: unknown = entry.run(Reflect.apply, method, instance, args);
      if (isObservable(result)) {
        // The lock now lives as long as the stream: until it completes, errors or is unsubscribed.
        handedOver = true;
        return result.pipe(finalize(() => void entry.exit()));
      }
      return isThenable(result) ? await result : result;
    } finally {
      if (!handedOver) {
        const exited = entry.exit();
        if (isThenable(exited)) await exited;
      }
    }
  }

  private enterFor(call: LockedInvocation): MaybePromise<LockEntry | undefined | typeof RUN_UNLOCKED> {
    if (!call.scheduled) return this.enter(call.name, call.options);
    return this.enterScheduled(call);
  }

  /** Scheduled ticks: a store failure skips the tick (or, with `failOpen`, runs it unlocked) instead of throwing into the scheduler. */
  private async enterScheduled(call: LockedInvocation): Promise<LockEntry | undefined | typeof RUN_UNLOCKED> {
    try {
      return await this.enter(call.name, call.options);
    } catch (err) {
      if (this.closing) {
        // A tick that raced the application's shutdown: nothing to run, nothing to report.
        this.logger.debug(scheduledShutdownLog(call.name));
        return undefined;
      }
      if (!(err instanceof LockStoreError)) throw err;
      if (call.options.failOpen) {
        this.logStoreFailure('warn', err, scheduledFailOpenLog(call.name, err.message));
        return RUN_UNLOCKED;
      }
      this.logStoreFailure('error', err, scheduledSkippedLog(call.name, err.message));
      this.emit({ type: 'skipped', name: call.name, reason: 'store-error' });
      return undefined;
    }
  }
}

/** `enterFor` result: run without the lock (scheduled task, `failOpen`, store down). */
const RUN_UNLOCKED = Symbol('run-unlocked');
