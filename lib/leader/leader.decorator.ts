import { LockOptionsError } from '../errors/lock.errors.js';
import { leaderNotAMethodMessage, leaderRunOptionMessage, leaderStaticMessage } from '../errors/lock.messages.js';
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
 * leads `name`: after bootstrap every replica campaigns, and the winner's
 * method is called with its {@link Leadership}. The method should run until
 * `leadership.signal` aborts, then return; the replica then gives the name up
 * and campaigns again after `retryDelay`. Terms, crashes and shutdown are in
 * docs/leader-election.md. The method is not replaced.
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
    throw new LockOptionsError(leaderRunOptionMessage(where));
  }
  const metadata: LeaderMetadata = { name, options: { ...options } };
  return (target: object, propertyKey: string | symbol, descriptor: PropertyDescriptor): PropertyDescriptor => {
    const className = typeof target === 'function' ? (target as { name: string }).name : target.constructor.name;
    const at = `${where} on ${className}.${String(propertyKey)}`;
    if (!descriptor || typeof descriptor.value !== 'function') {
      throw new LockOptionsError(leaderNotAMethodMessage(at, String(propertyKey)));
    }
    if (typeof target === 'function') {
      throw new LockOptionsError(leaderStaticMessage(at));
    }
    Reflect.defineMetadata(LEADER_METADATA, metadata, descriptor.value as object);
    return descriptor;
  };
}
