import { InMemoryLockProvider } from './memory/index.js';
import type { LockProvider } from '../contract/lock-provider.js';
import type { LockModuleOptions } from '../contract/lock-options.interface.js';
import { assertModuleOptions } from '../engine/lock-options.validation.js';

const owned = new WeakSet<LockProvider>();

/**
 * Builds the store from module options: `provider` as given, a
 * `RedisLockProvider` for `redis` (ioredis is loaded only then), a
 * `PostgresLockProvider` for `postgres` (`pg` is loaded only then), else the
 * in-memory default. Providers built here are closed by the module on
 * shutdown; a `provider` you pass in stays yours.
 */
export async function createLockProvider(options: LockModuleOptions = {}): Promise<LockProvider> {
  assertModuleOptions(options);
  if (options.provider) return options.provider;
  if (options.redis !== undefined) {
    const { RedisLockProvider } = await import('./redis/index.js');
    const redis = new RedisLockProvider({ redis: options.redis, commandTimeout: options.commandTimeout, waitForReplicas: options.waitForReplicas });
    owned.add(redis);
    return redis;
  }
  if (options.postgres !== undefined) {
    // Loaded only when configured: `pg` is an optional peer dependency.
    const { PostgresLockProvider } = await import('./postgres/index.js');
    const given = options.postgres;
    const settings =
      typeof given === 'object' && given !== null && 'connection' in given ? { ...given } : { connection: given };
    const provider = new PostgresLockProvider({ commandTimeout: options.commandTimeout, ...settings });
    owned.add(provider);
    return provider;
  }
  const provider = new InMemoryLockProvider();
  owned.add(provider);
  return provider;
}

/** Whether the module built `provider` (and so must close it). @internal */
export function isOwnedProvider(provider: LockProvider): boolean {
  return owned.has(provider);
}
