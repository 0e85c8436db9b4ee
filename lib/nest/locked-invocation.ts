import { isObservable, Observable, defer, from, switchMap, EMPTY, finalize } from 'rxjs';
import type { LockEntry } from '../engine/lock-context.js';
import type { LockEngine } from '../engine/lock-engine.interface.js';
import type { ResolvedCallOptions } from '../engine/resolved-call-options.js';
import { andThen, ownAnswer, type MaybePromise } from '../contract/maybe-promise.js';
import { LockStoreError } from '../errors/lock.errors.js';
import {
  scheduledFailOpenLog,
  scheduledShutdownLog,
  scheduledSkippedLog,
  callerlessKinds,
} from '../errors/lock.messages.js';

/** How a decorated method is to be locked. @internal */
export interface LockedInvocation {
  /** The lock name, or several (canonical order). */
  readonly name: string | readonly string[];
  readonly options: ResolvedCallOptions;
  /**
   * A method no caller waits on: `'scheduled task'` (`@Cron`/`@Interval`/`@Timeout`) or
   * `'event handler'` (`@OnEvent`, `@EventPattern`). Store failures skip the call
   * with a log line (or run it with `failOpen`) instead of throwing into the scheduler or emitter.
   */
  readonly callerless: CallerlessKind | undefined;
  /** Declared to return an Observable: lock on subscribe, release on complete/error/unsubscribe. */
  readonly observable: boolean;
}

/** A method no caller waits on. @internal */
export type CallerlessKind = (typeof callerlessKinds)[keyof typeof callerlessKinds];

/** The method call of a `@Locked` method. @internal */
export interface MethodCall {
  readonly instance: unknown;
  readonly method: (...args: unknown[]) => unknown;
  readonly args: unknown[];
}

/** `enterFor` result: run without the lock (scheduled task or event handler, `failOpen`, store down). */
const RUN_UNLOCKED = Symbol('run-unlocked');
type Entered = LockEntry | undefined | typeof RUN_UNLOCKED;
const asEntered = (entry: Entered): Entered => entry;

/** Runs a `@Locked` method under its lock. @internal */
export function invokeLocked(engine: LockEngine, lock: LockedInvocation, call: MethodCall): unknown {
  if (!lock.observable) return invokeAsync(engine, lock, call);
  const { instance, method, args } = call;
  return defer(() =>
    from(Promise.resolve(enterFor(engine, lock, asEntered))).pipe(
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
    ),
  );
}

/**
 * The lock, then the method inside it, then the release: promise callbacks
 * rather than an async function, so a call costs one promise per step that
 * waits (the store's answer, the method's promise, the store's release) and
 * none for the steps that answer at once.
 */
function invokeAsync(engine: LockEngine, lock: LockedInvocation, call: MethodCall): Promise<unknown> {
  try {
    return Promise.resolve(enterFor(engine, lock, (entry) => runLocked(entry, call)));
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Runs the method under `entry` and releases after it (an Observable holds the lock until the stream ends). */
function runLocked(entry: Entered, { instance, method, args }: MethodCall): MaybePromise<unknown> {
  if (!entry) return undefined;
  if (entry === RUN_UNLOCKED) return method.apply(instance, args);
  let result: unknown;
  try {
    result = entry.run(Reflect.apply, method, instance, args);
  } catch (err) {
    return entry.exitThen(() => Promise.reject(err));
  }
  // The lock now lives as long as the stream: until it completes, errors or is unsubscribed.
  if (isObservable(result)) return result.pipe(finalize(() => void entry.exit()));
  return andThen(
    ownAnswer(result),
    (value) => entry.exitThen(() => value),
    (err: unknown) => entry.exitThen(() => Promise.reject(err)),
  );
}

/** `next` of the entry (in the same promise turn as the store's answer, for a method with a caller). */
function enterFor<R>(
  engine: LockEngine,
  lock: LockedInvocation,
  next: (entry: Entered) => MaybePromise<R>,
): MaybePromise<R> {
  if (lock.callerless === undefined) return engine.enter(lock.name, lock.options, next);
  return enterCallerless(engine, lock, lock.callerless).then(next);
}

/**
 * Scheduled ticks and events: a store failure skips the call (or, with
 * `failOpen`, runs it unlocked) instead of throwing into the scheduler or emitter.
 */
async function enterCallerless(engine: LockEngine, lock: LockedInvocation, kind: CallerlessKind): Promise<Entered> {
  try {
    return await engine.enter(lock.name, lock.options, asEntered);
  } catch (err) {
    if (engine.closing) {
      // A tick that raced the application's shutdown: nothing to run, nothing to report.
      engine.logger.debug(scheduledShutdownLog(kind, String(lock.name)));
      return undefined;
    }
    if (!(err instanceof LockStoreError)) throw err;
    if (lock.options.failOpen) {
      engine.logStoreFailure('warn', err, scheduledFailOpenLog(kind, String(lock.name), err.message));
      return RUN_UNLOCKED;
    }
    engine.logStoreFailure('error', err, scheduledSkippedLog(kind, String(lock.name), err.message));
    if (engine.observed) engine.emit({ type: 'skipped', name: String(lock.name), reason: 'store-error' });
    return undefined;
  }
}
