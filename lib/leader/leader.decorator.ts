import { LockOptionsError } from '../errors/lock.errors.js';
import { leaderOnlyMessage } from '../errors/lock.messages.js';
import type { LeaderOptions } from './leader-options.interface.js';
import { assertLeaderName, assertLeaderOptions } from './leader-options.validation.js';

/** Metadata key of `@Leader` on the method function. @internal */
export const LEADER_METADATA = 'nest-lock:leader';

/** What `@Leader` records on a method. @internal */
export interface LeaderMetadata {
  readonly name: string;
  readonly options: LeaderOptions;
}

/**
 * Runs the method on one replica at a time, for as long as that replica
 * leads `name`. After application bootstrap every replica campaigns for the
 * name; the one that wins calls the method with its {@link Leadership}
 * (fencing token, `signal` that aborts when leadership ends). Bootstrap does
 * not wait for the method.
 *
 * - The method should run until `leadership.signal` aborts (or
 *   `leadership.leading` turns `false`), then return.
 * - When it returns or throws, the replica gives the name up (another
 *   replica may take over at once) and campaigns again after `retryDelay`
 *   (default 1 s): a method that returns at once runs at most once per
 *   `retryDelay` on a replica, never in a hot loop. A throw is logged.
 * - A crashed leader keeps the name until its lease (`ttl`, default 15 s)
 *   ends; a leader that cannot renew its lease stops leading (its signal
 *   aborts) before the lease can end on the store.
 * - On shutdown (`app.close()`, or a signal with `enableShutdownHooks()`),
 *   the signal aborts, and once the method returned the name is released,
 *   so another replica takes over at once.
 *
 * The method is not replaced, so other decorators' metadata stays as it is.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class OutboxRelay {
 *   @Leader('outbox-relay')
 *   async relay(leadership: Leadership) {
 *     while (leadership.leading) {
 *       const sent = await this.outbox.publishPending({ fencingToken: leadership.fencingToken, signal: leadership.signal });
 *       if (sent === 0) await setTimeout(500, undefined, { signal: leadership.signal }).catch(() => {});
 *     }
 *   }
 * }
 * ```
 */
export function Leader(name: string, options?: LeaderOptions): MethodDecorator {
  const where = `@Leader(${JSON.stringify(name) ?? String(name)})`;
  assertLeaderName(name, where);
  assertLeaderOptions(options, where);
  if (options && 'run' in options && options.run !== undefined) {
    throw new LockOptionsError(leaderOnlyMessage(where, 'run is not an option of @Leader (the decorated method is what runs)', 'leave it out'));
  }
  const metadata: LeaderMetadata = { name, options: { ...options } };
  return (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor => {
    const className = typeof target === 'function' ? (target as { name: string }).name : target.constructor.name;
    const at = `${where} on ${className}.${String(propertyKey)}`;
    if (!descriptor || typeof descriptor.value !== 'function') {
      throw new LockOptionsError(leaderOnlyMessage(at, `@Leader() decorates methods only; ${String(propertyKey)} is not a method`, 'move it to a method'));
    }
    if (typeof target === 'function') {
      throw new LockOptionsError(leaderOnlyMessage(at, 'static methods cannot lead', 'put @Leader on a method of a provider Nest creates'));
    }
    Reflect.defineMetadata(LEADER_METADATA, metadata, descriptor.value as object);
    return descriptor;
  };
}
