import { Inject } from '@nestjs/common';
import { Observable } from 'rxjs';
import { LockOptionsError } from './lock.errors.js';
import type { LockCallOptions } from './lock-options.interface.js';
import { assertCallOptions, assertLockName } from './lock-options.validation.js';
import { LockService, type LockedInvocation } from './lock.service.js';

/** A lock name computed from the method's own arguments (after pipes, in a controller). */
export type LockNameFactory = (...args: any[]) => string;

/** Options of {@link Locked}. */
export interface LockedOptions extends Omit<LockCallOptions, 'signal'> {
  /** The lock name, or a function of the method's arguments. Default: `ClassName.methodName`. */
  name?: string | LockNameFactory;
}

const LOCK_SERVICE = Symbol('LockService');
const SCHEDULER_TYPE = 'SCHEDULER_TYPE'; // @nestjs/schedule's metadata key on @Cron/@Interval/@Timeout methods
const PROPERTY_DEPS = 'self:properties_metadata'; // Nest's property-injection metadata

/**
 * Runs the method under a lock: takes it before the method, releases it in
 * `finally` (on return, throw or rejection). A decorated method returns a
 * Promise; one declared to return an Observable returns an Observable that
 * holds the lock until it completes, errors or is unsubscribed.
 *
 * When the lock is held: `onHeld: 'throw'` (default) throws
 * {@link LockAcquireError} (a 500 in HTTP, 409 with {@link LockExceptionFilter});
 * `'skip'` returns `undefined` without running the method (the default for
 * `@Cron`/`@Interval`/`@Timeout` tasks); `'wait'` queues up to `waitTimeout`.
 *
 * Keeps every other decorator's metadata, above or below it.
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
 * ```
 */
export function Locked(name?: string | LockNameFactory | LockedOptions, options?: Omit<LockedOptions, 'name'>): MethodDecorator {
  const merged: LockedOptions =
    name === undefined || typeof name === 'string' || typeof name === 'function'
      ? { ...options, name }
      : (name as LockedOptions) !== null && typeof name === 'object' && options === undefined
        ? { ...name }
        : invalidArguments(name, options);

  return (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor => {
    const className = typeof target === 'function' ? (target as { name: string }).name : target.constructor.name;
    const where = `@Locked() on ${className}.${String(propertyKey)}`;
    if (!descriptor || typeof descriptor.value !== 'function') {
      throw new LockOptionsError(`${where}: @Locked() decorates methods only; ${String(propertyKey)} is not a method.`);
    }
    if (typeof target === 'function') {
      throw new LockOptionsError(`${where}: static methods cannot be locked; Nest injects LockService into instances only.`);
    }
    const { name: lockName = `${className}.${String(propertyKey)}`, ...callOptions } = merged;
    if (typeof lockName !== 'function') assertLockName(lockName, where);
    assertCallOptions(callOptions, where);

    const original = descriptor.value as (...args: unknown[]) => unknown;
    const observable = Reflect.getMetadata?.('design:returntype', target, propertyKey) === Observable;
    let resolved: { service: LockService; options: LockedInvocation['options']; scheduled: boolean } | undefined;

    const wrapper = function (this: Record<symbol, unknown>, ...args: unknown[]): unknown {
      const service = this?.[LOCK_SERVICE];
      if (!(service instanceof LockService)) {
        const error = new LockOptionsError(
          `${where}: no LockService on this instance. @Locked methods must belong to a class Nest creates (a provider or controller) ` +
            'in an app that imports LockModule.forRoot().',
        );
        return observable ? new Observable((s) => s.error(error)) : Promise.reject(error);
      }
      let name: string;
      try {
        name = typeof lockName === 'function' ? nameFrom(lockName, args, where) : lockName;
      } catch (err) {
        return observable ? new Observable((s) => s.error(err)) : Promise.reject(err);
      }
      if (resolved?.service !== service) {
        // Read lazily: @Cron above @Locked adds its metadata to the wrapper after this decorator ran.
        const scheduled = Reflect.getMetadata?.(SCHEDULER_TYPE, wrapper) !== undefined;
        const opts = scheduled && callOptions.onHeld === undefined ? { ...callOptions, onHeld: 'skip' as const } : callOptions;
        resolved = { service, options: service.resolve(opts), scheduled };
      }
      return service.invokeLocked({ name, options: resolved.options, scheduled: resolved.scheduled, observable }, this, original, args);
    };

    // Carry over what decorators below this one attached to the original function.
    for (const key of Reflect.getOwnMetadataKeys?.(original) ?? []) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
    }
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });

    const injected = (Reflect.getOwnMetadata?.(PROPERTY_DEPS, target.constructor) ?? []) as Array<{ key: unknown }>;
    if (!injected.some((dep) => dep.key === LOCK_SERVICE)) Inject(LockService)(target, LOCK_SERVICE);

    return { ...descriptor, value: wrapper };
  };
}

function nameFrom(factory: LockNameFactory, args: unknown[], where: string): string {
  let name: unknown;
  try {
    name = factory(...args);
  } catch (err) {
    throw new LockOptionsError(`${where}: the lock name function threw: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return assertLockName(name, `${where} (name function)`);
}

function invalidArguments(name: unknown, options: unknown): never {
  throw new LockOptionsError(
    `@Locked(): expected a name (string), a name function or an options object, then optional options; got ${
      name === null ? 'null' : typeof name
    }${options === undefined ? '' : ' and options'}.`,
  );
}
