import { Inject, Logger, UseInterceptors, type ExecutionContext } from '@nestjs/common';
import { Observable } from 'rxjs';
import { LockAcquireError, LockOptionsError } from '../errors/lock.errors.js';
import {
  invalidLockedArgumentsMessage,
  jobDelayWithOnHeldMessage,
  missingModuleKey,
  nameFromContextThrewMessage,
  nameFunctionThrewMessage,
  nameWithNameFromContextMessage,
  noLockServiceMessage,
  notAMethodMessage,
  optionMessage,
  staticMethodMessage,
  suspiciousNameLog,
  expected,
  optionPlaces,
  callerlessKinds,
} from '../errors/lock.messages.js';
import type { LockCallOptions } from '../contract/lock-options.interface.js';
import { assertCallOptions, assertLockNames } from '../engine/lock-options.validation.js';
import { LockService } from './lock.service.js';
import { invokeLocked, type CallerlessKind, type LockedInvocation } from './locked-invocation.js';
import { assertJobCall, assertJobDelay, delayHeldJob, type JobDelay } from './delayed-job.js';
import type { LockEngine } from '../engine/lock-engine.interface.js';
import { HandlerContextInterceptor, HandlerContexts } from './handler-context.js';

/** A lock name (or several: all or none) computed from the method's own arguments (after pipes, in a controller). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a name function takes the method's own typed arguments; unknown[] would refuse them
export type LockNameFactory = (...args: any[]) => string | readonly string[];

/**
 * A lock name computed from Nest's `ExecutionContext` of the call, then the
 * method's arguments. `context` is set when Nest calls this method as the
 * handler (HTTP, GraphQL, RPC, WebSocket), after guards and pipes; it is
 * `undefined` for any other call (a cron tick, an event listener, a call from
 * another provider or a test), so the function must handle it.
 */
export type LockContextNameFactory = (
  context: ExecutionContext | undefined,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as LockNameFactory: the method's own typed arguments follow the context
  ...args: any[]
) => string | readonly string[];

/** Options of {@link Locked}. */
export interface LockedOptions extends Omit<LockCallOptions, 'signal'> {
  /** The lock name, several names (all or none), or a function of the method's arguments. Default: `ClassName.methodName`. */
  name?: string | readonly string[] | LockNameFactory;
  /**
   * Instead of `name`: a function of Nest's `ExecutionContext` of the call
   * (`undefined` when Nest is not calling this method as its handler), then
   * the method's arguments, for a value that lives in the context (a GraphQL
   * context's tenant, RPC metadata, the WebSocket client). See docs/contexts.md.
   *
   * @example
   * ```ts
   * @Locked({ nameFromContext: (ctx) => `tenant:${ctx?.switchToHttp().getRequest().headers['x-tenant'] ?? 'none'}` })
   * ```
   */
  nameFromContext?: LockContextNameFactory;
  /**
   * On a BullMQ processor's `process(job, token)`: when the lock is held, move
   * the job back to delayed for this many ms (or a function of the job, for a
   * backoff) and throw BullMQ's `DelayedError`, instead of failing the job or
   * holding a worker slot while it waits. Replaces `onHeld`. See docs/contexts.md.
   */
  jobDelay?: JobDelay;
}

const SCHEDULER_TYPE = 'SCHEDULER_TYPE'; // @nestjs/schedule's metadata key on @Cron/@Interval/@Timeout methods
const EVENT_LISTENER = 'EVENT_LISTENER_METADATA'; // @nestjs/event-emitter's key on @OnEvent methods
const PATTERN_HANDLER = 'microservices:handler_type'; // @nestjs/microservices' key: 1 @MessagePattern, 2 @EventPattern
const EVENT_PATTERN = 2;

/** Whether a decorated method has no caller to answer (read from the other decorators' metadata, no import of them). */
function callerlessKind(method: object): CallerlessKind | undefined {
  if (Reflect.getMetadata?.(SCHEDULER_TYPE, method) !== undefined) return callerlessKinds.task;
  if (Reflect.getMetadata?.(EVENT_LISTENER, method) !== undefined) return callerlessKinds.event;
  if (Reflect.getMetadata?.(PATTERN_HANDLER, method) === EVENT_PATTERN) return callerlessKinds.event;
  return undefined;
}

/**
 * Has Nest inject LockService into each instance of the method's class, as
 * a property of the method's own (so the decorator keeps no table of
 * classes), and returns its key. The key's description is what Nest shows
 * when no LockService can be injected (LockModule.forRoot() not imported):
 * "Please make sure that the "Symbol(<description>)" property is available",
 * so it says what to do and names the class and method. Property injection
 * of a class token works the same on Nest 11 and 12.
 */
function injectLockService(target: object, className: string, method: string): symbol {
  const key = Symbol(missingModuleKey(className, method));
  Inject(LockService)(target, key);
  return key;
}

/** `undefined`, `null` or `NaN` as a whole segment of a name (`user:undefined`, `a/null/b`). */
const SUSPICIOUS_SEGMENT = /(?:^|[^A-Za-z0-9_])(undefined|null|NaN)(?![A-Za-z0-9_])/;
const logger = new Logger('LockService');
/** The ExecutionContext of Nest's handler calls, for the methods with `nameFromContext`. */
const handlerContexts = new HandlerContexts();

/**
 * Runs the method under a lock, released in `finally` (a method declared to
 * return an Observable holds it until the stream ends). When the lock is
 * held, follows `onHeld`: `'throw'` ({@link LockAcquireError}; 409 with
 * {@link LockExceptionFilter}), `'skip'` (returns `undefined`; the default
 * for `@Cron`/`@Interval`/`@Timeout`, `@OnEvent` and `@EventPattern`, which
 * have no caller to answer) or `'wait'`. A name (or name function)
 * may give several names: all are taken, in sorted order, or none. Keeps
 * other decorators' metadata. With `nameFromContext`, the name function also
 * gets Nest's `ExecutionContext` of the handler call (through an interceptor
 * that only records it; the lock is still taken in the method's wrapper).
 *
 * @example
 * ```ts
 * @Post('payouts/run')
 * @Locked('payouts')
 * run() { ... }
 *
 * @Post('accounts/:id/recompute')
 * @Locked((id: string) => `account:${id}`, { onHeld: 'wait', waitTimeout: 5_000 })
 * recompute(@Param('id') id: string) { ... }
 *
 * @Cron('0 3 * * *')
 * @Locked({ name: 'nightly-digest', holdAtLeast: 60_000 })
 * digest() { ... }
 *
 * @Locked((t: TransferDto) => [`account:${t.from}`, `account:${t.to}`], { onHeld: 'wait' })
 * transfer(t: TransferDto) { ... }
 *
 * @MessagePattern('report.build')
 * @Locked({ nameFromContext: (ctx, data: { tenant: string }) => `tenant:${data.tenant}:${ctx?.switchToRpc().getContext().getPattern()}` })
 * build(@Payload() data: { tenant: string }) { ... }
 * ```
 */
export function Locked(
  name?: string | readonly string[] | LockNameFactory | LockedOptions,
  options?: Omit<LockedOptions, 'name'>,
): MethodDecorator {
  const merged: LockedOptions =
    name === undefined || typeof name === 'string' || typeof name === 'function' || Array.isArray(name)
      ? { ...options, name: name as LockedOptions['name'] }
      : (name as LockedOptions) !== null && typeof name === 'object' && options === undefined
        ? { ...(name as LockedOptions) }
        : invalidArguments(name, options);

  return (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor => {
    const className = typeof target === 'function' ? (target as { name: string }).name : target.constructor.name;
    const where = `@Locked() on ${className}.${String(propertyKey)}`;
    if (!descriptor || typeof descriptor.value !== 'function') {
      throw new LockOptionsError(notAMethodMessage(where, String(propertyKey)));
    }
    if (typeof target === 'function') {
      throw new LockOptionsError(staticMethodMessage(where));
    }
    const { name: givenName, nameFromContext, jobDelay, ...callOptions } = merged;
    if (nameFromContext !== undefined) {
      if (givenName !== undefined) throw new LockOptionsError(nameWithNameFromContextMessage(where));
      if (typeof nameFromContext !== 'function')
        throw new LockOptionsError(optionMessage(where, 'nameFromContext', expected.function, nameFromContext));
    }
    const given = givenName ?? `${className}.${String(propertyKey)}`;
    if (jobDelay !== undefined) {
      assertJobDelay(jobDelay, where);
      if (callOptions.onHeld !== undefined)
        throw new LockOptionsError(jobDelayWithOnHeldMessage(where, String(callOptions.onHeld)));
      callOptions.onHeld = 'throw';
    }
    // A static name list in its canonical order (sorted, without duplicates), once.
    const withContext = nameFromContext !== undefined;
    const lockName: string | readonly string[] | LockNameFactory =
      nameFromContext ?? (typeof given === 'function' ? given : assertLockNames(given, where));
    assertCallOptions(callOptions, where);
    const LOCK_SERVICE = injectLockService(target, className, String(propertyKey));
    /** Whether this method's names were already found suspicious (warned once per method). */
    let warned = typeof lockName === 'function' ? false : warnSuspicious(lockName, where);
    // Metrics and traces name the lock by its template, not by names that carry ids.
    callOptions.label ??= typeof lockName === 'function' ? `${className}.${String(propertyKey)}` : String(lockName);

    const original = descriptor.value as (...args: unknown[]) => unknown;
    const observable = Reflect.getMetadata?.('design:returntype', target, propertyKey) === Observable;
    let resolved:
      | {
          service: LockService;
          engine: LockEngine;
          options: LockedInvocation['options'];
          callerless: CallerlessKind | undefined;
        }
      | undefined;

    const lockedCall = (
      self: Record<symbol, unknown> | undefined,
      args: unknown[],
      context: ExecutionContext | undefined,
    ): unknown => {
      const service = self?.[LOCK_SERVICE];
      if (!(service instanceof LockService)) {
        const error = new LockOptionsError(noLockServiceMessage(where));
        return observable ? new Observable((s) => s.error(error)) : Promise.reject(error);
      }
      let name: string | readonly string[];
      try {
        if (jobDelay !== undefined) assertJobCall(args, where);
        name =
          typeof lockName === 'function'
            ? nameFrom(lockName, withContext ? [context, ...args] : args, where, withContext)
            : lockName;
      } catch (err) {
        return observable ? new Observable((s) => s.error(err)) : Promise.reject(err);
      }
      if (!warned) warned = warnSuspicious(name, where);
      if (resolved?.service !== service) {
        // Read lazily: @Cron or @OnEvent above @Locked adds its metadata to the wrapper after this decorator ran.
        const callerless = callerlessKind(wrapper);
        const opts =
          callerless && callOptions.onHeld === undefined ? { ...callOptions, onHeld: 'skip' as const } : callOptions;
        const engine = service.manager.engine;
        resolved = { service, engine, options: engine.resolve(opts), callerless };
      }
      const result = invokeLocked(
        resolved.engine,
        { name, options: resolved.options, callerless: resolved.callerless, observable },
        { instance: self, method: original, args },
      );
      if (jobDelay === undefined) return result;
      return (result as Promise<unknown>).catch((err: unknown) => {
        if (err instanceof LockAcquireError && err.reason === 'held')
          return delayHeldJob(args, err.lockName ?? String(name), jobDelay);
        throw err;
      });
    };
    const wrapper = !withContext
      ? function (this: Record<symbol, unknown> | undefined, ...args: unknown[]): unknown {
          return lockedCall(this, args, undefined);
        }
      : function (this: Record<symbol, unknown> | undefined, ...args: unknown[]): unknown {
          // Nest's context for its call of this handler; the method runs without it, so what it calls does not see it.
          const context = handlerContexts.contextOf(wrapper);
          return context === undefined
            ? lockedCall(this, args, undefined)
            : handlerContexts.without(() => lockedCall(this, args, context));
        };

    // Carry over what decorators below this one attached to the original function.
    for (const key of Reflect.getOwnMetadataKeys?.(original) ?? []) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
    }
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });

    const locked = { ...descriptor, value: wrapper };
    // Only for nameFromContext: an interceptor that records the handler call's ExecutionContext (no lock in it).
    if (withContext)
      UseInterceptors(new HandlerContextInterceptor(handlerContexts, wrapper))(target, propertyKey, locked);
    return locked;
  };
}

function nameFrom(
  factory: LockNameFactory,
  args: unknown[],
  where: string,
  withContext: boolean,
): string | readonly string[] {
  let name: unknown;
  try {
    name = factory(...args);
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    throw new LockOptionsError((withContext ? nameFromContextThrewMessage : nameFunctionThrewMessage)(where, cause), {
      cause: err,
    });
  }
  return assertLockNames(name, optionPlaces.nameFunction(where));
}

/** Warns (through Nest's Logger) when a name has an `undefined`/`null`/`NaN` segment; returns whether it did. */
function warnSuspicious(names: string | readonly string[], where: string): boolean {
  if (typeof names === 'string') return warnIfSuspicious(names, where);
  return names.some((name) => warnIfSuspicious(name, where));
}

function warnIfSuspicious(name: string, where: string): boolean {
  const m = SUSPICIOUS_SEGMENT.exec(name);
  if (m === null) return false;
  logger.warn(suspiciousNameLog(where, name, m[1]));
  return true;
}

function invalidArguments(name: unknown, options: unknown): never {
  throw new LockOptionsError(
    invalidLockedArgumentsMessage(name === null ? 'null' : typeof name, options !== undefined),
  );
}
