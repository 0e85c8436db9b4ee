import { Injectable, Logger } from '@nestjs/common';
import type { LockProvider } from '../contract/lock-provider.js';
import { buildLockProvider } from '../stores/lock-provider.factory.js';
import type { LockModuleOptions } from './lock-module-options.interface.js';

/** Token of whether `LockService` closes the module's `LockProvider` (`true` for a store the module built). @internal */
export const CLOSES_LOCK_PROVIDER = Symbol('nest-lock:closes-lock-provider');

/** Token of whether `LockService` releases the held locks in `onModuleDestroy` (`true` when the store runs on a connection the app owns). @internal */
export const SHARES_APP_CONNECTION = Symbol('nest-lock:shares-app-connection');

/** Whether a `redis` / `postgres` / `mysql` option is a connection the provider opens (a URL or plain options), not a client or pool of the app. */
function opensItsOwn(connection: unknown): boolean {
  if (typeof connection === 'string') return true;
  if (typeof connection !== 'object' || connection === null || Array.isArray(connection)) return false;
  const prototype = Object.getPrototypeOf(connection);
  if (prototype !== Object.prototype && prototype !== null) return false;
  // The provider options of `postgres` / `mysql` carry the connection in `connection`.
  return 'connection' in connection ? opensItsOwn(connection.connection) : true;
}

/**
 * The store of `LockModule`: the options' `provider`, or one built from
 * their `redis` / `postgres` / `mysql` (or the in-memory default), remembered so that
 * the module closes only what it built: not a `provider` passed in, nor one
 * that a test module put in place of `LockProvider` (then this builds nothing).
 * @internal
 */
@Injectable()
export class ModuleLockStore {
  private built: LockProvider | undefined;

  /** The module's `LockProvider`, from its (checked) options. */
  async provide(options: LockModuleOptions): Promise<LockProvider> {
    // (the store logs what it finds wrong with its server, e.g. a Redis that may evict lock keys)
    const provider = await buildLockProvider(options, new Logger('RedisLockProvider'));
    if (provider !== options.provider) this.built = provider;
    return provider;
  }

  /**
   * Whether `provider` runs on a connection the app owns (a store passed in,
   * or one built on the app's client or pool): another module may close that
   * connection in its `onModuleDestroy`, before the locks would be released.
   */
  sharesAppConnection(provider: LockProvider, options: LockModuleOptions): boolean {
    if (!this.isBuilt(provider)) return true;
    const connection = options.redis ?? options.postgres ?? options.mysql;
    return connection !== undefined && !opensItsOwn(connection);
  }

  /** Whether `provider` is the store this module built (and so closes). */
  isBuilt(provider: LockProvider): boolean {
    return provider === this.built;
  }
}
