import { Injectable, Logger } from '@nestjs/common';
import type { LockProvider } from '../contract/lock-provider.js';
import { buildLockProvider } from '../stores/lock-provider.factory.js';
import type { LockModuleOptions } from './lock-module-options.interface.js';

/** Token of whether `LockService` closes the module's `LockProvider` (`true` for a store the module built). @internal */
export const CLOSES_LOCK_PROVIDER = Symbol('nest-lock:closes-lock-provider');

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

  /** Whether `provider` is the store this module built (and so closes). */
  isBuilt(provider: LockProvider): boolean {
    return provider === this.built;
  }
}
