import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  ConfigurableLockModule,
  LOCK_ASYNC_OPTIONS_TYPE,
  LOCK_MODULE_OPTIONS,
  LOCK_OPTIONS_TYPE,
} from './lock.module-definition.js';
import { LockProvider } from '../contract/lock-provider.js';
import type { LockModuleOptions } from './lock-module-options.interface.js';
import { assertModuleOptions } from './lock-module-options.validation.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage, expected, optionPlaces } from '../errors/lock.messages.js';
import { LockService } from './lock.service.js';
import { CLOSES_LOCK_PROVIDER, ModuleLockStore, SHARES_APP_CONNECTION } from './module-lock-store.js';
import { LeaderExplorer } from './leader.explorer.js';
import { LeaderService } from './leader.service.js';

/**
 * Registers {@link LockService}, {@link LeaderService} and the
 * {@link LockProvider} store, and starts the campaigns of `@Leader` methods at
 * application bootstrap. Global by default (`isGlobal: true`), so `@Locked`
 * works in every module.
 *
 * @example
 * ```ts
 * @Module({ imports: [LockModule.forRoot()] })           // in-memory, one process
 * export class AppModule {}
 *
 * LockModule.forRootAsync({                              // options from config
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ ttl: config.get('LOCK_TTL') }),
 * })
 * ```
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    ModuleLockStore,
    {
      provide: LockProvider,
      inject: [LOCK_MODULE_OPTIONS, ModuleLockStore],
      useFactory: (options: LockModuleOptions, store: ModuleLockStore) => store.provide(options ?? {}),
    },
    // LockService closes the store on shutdown when the module built it (not one given, nor a test module's replacement).
    {
      provide: CLOSES_LOCK_PROVIDER,
      inject: [ModuleLockStore, LockProvider],
      useFactory: (store: ModuleLockStore, provider: LockProvider) => store.isBuilt(provider),
    },
    // LockService releases the held locks before another module can close a connection the app owns.
    {
      provide: SHARES_APP_CONNECTION,
      inject: [ModuleLockStore, LockProvider, LOCK_MODULE_OPTIONS],
      useFactory: (store: ModuleLockStore, provider: LockProvider, options: LockModuleOptions) =>
        store.sharesAppConnection(provider, options ?? {}),
    },
    LockService,
    LeaderService,
    LeaderExplorer,
  ],
  exports: [LockService, LockProvider, LeaderService],
})
export class LockModule extends ConfigurableLockModule {
  /** Registers the module with static options (validated now). */
  static forRoot(options: typeof LOCK_OPTIONS_TYPE = {}): DynamicModule {
    assertModuleOptions(
      options === null || typeof options !== 'object' ? options : { ...options, isGlobal: undefined },
    );
    if (options.isGlobal !== undefined && typeof options.isGlobal !== 'boolean') {
      throw new LockOptionsError(
        optionMessage(optionPlaces.moduleOptions, 'isGlobal', expected.boolean, options.isGlobal),
      );
    }
    return super.forRoot(options);
  }

  /** Registers the module with options from a factory, class or existing provider (validated at boot, as they come). */
  static forRootAsync(options: typeof LOCK_ASYNC_OPTIONS_TYPE): DynamicModule {
    const module = super.forRootAsync(options);
    return { ...module, providers: module.providers?.map(checkedWhenResolved) };
  }
}

/** The options provider of `forRootAsync`, checking what its factory resolves. */
function checkedWhenResolved(provider: Provider): Provider {
  if (typeof provider !== 'object' || provider.provide !== LOCK_MODULE_OPTIONS || !('useFactory' in provider))
    return provider;
  const build = provider.useFactory;
  return {
    ...provider,
    useFactory: async (...deps: unknown[]) => {
      const options: unknown = await build(...deps);
      assertModuleOptions(options);
      return options;
    },
  };
}
