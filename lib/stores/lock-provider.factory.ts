import { InMemoryLockProvider } from './memory/index.js';
import { optionPlaces } from '../errors/lock.messages.js';
import type { LockProvider } from '../contract/lock-provider.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import type { LockStoreOptions } from './lock-store-options.interface.js';
import type { MysqlConnection, MysqlLockProviderOptions } from './mysql/index.js';
import { assertStoreOptions } from './lock-store-options.validation.js';

/**
 * Builds the store that options name: `provider` as given, a
 * `RedisLockProvider` for `redis`, a `PostgresLockProvider` for `postgres`,
 * a `MysqlLockProvider` for `mysql` (each peer loaded only then), else the
 * in-memory default. `LockModule` closes on shutdown a store it built; a
 * `provider` you pass stays yours.
 * @throws {LockOptionsError} for store options that can never work.
 */
export async function createLockProvider(options: LockStoreOptions = {}): Promise<LockProvider> {
  assertStoreOptions(options, optionPlaces.moduleOptions);
  return buildLockProvider(options);
}

/** {@link createLockProvider} for options already checked (the module's); `logger`: where the store logs what it finds wrong with its server. @internal */
export async function buildLockProvider(options: LockStoreOptions, logger?: LockLogger): Promise<LockProvider> {
  if (options.provider) return options.provider;
  if (options.redis !== undefined) {
    const { RedisLockProvider } = await import('./redis/index.js');
    const { redis: connection, commandTimeout, waitForReplicas, evictionCheck } = options;
    return new RedisLockProvider({ redis: connection, commandTimeout, waitForReplicas, evictionCheck, logger });
  }
  if (options.postgres !== undefined) {
    const { PostgresLockProvider } = await import('./postgres/index.js');
    const given = options.postgres;
    const settings =
      typeof given === 'object' && given !== null && 'connection' in given ? { ...given } : { connection: given };
    return new PostgresLockProvider({ commandTimeout: options.commandTimeout, ...settings });
  }
  if (options.mysql !== undefined) {
    const { MysqlLockProvider } = await import('./mysql/index.js');
    const given = options.mysql;
    const full = typeof given === 'object' && given !== null && 'connection' in given && !('getConnection' in given);
    const settings = full ? { ...(given as MysqlLockProviderOptions) } : { connection: given as MysqlConnection };
    return new MysqlLockProvider({ commandTimeout: options.commandTimeout, ...settings });
  }
  return new InMemoryLockProvider();
}
