import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  ConfigurableLockModule,
  LOCK_ASYNC_OPTIONS_TYPE,
  LOCK_MODULE_OPTIONS,
  LOCK_OPTIONS_TYPE,
} from './lock.module-definition.js';
import { LockProvider } from '../contract/lock-provider.js';
import type { LockModuleOptions } from '../contract/lock-options.interface.js';
import { assertModuleOptions } from '../engine/lock-options.validation.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage } from '../errors/lock.messages.js';
import { createLockProvider } from '../stores/lock-provider.factory.js';
import { LockService } from './lock.service.js';
import { LeaderExplorer } from '../leader/leader.explorer.js';
import { LeaderService } from '../leader/leader.service.js';

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
    {
      provide: LockProvider,
      inject: [LOCK_MODULE_OPTIONS],
      useFactory: (options: LockModuleOptions) => createLockProvider(options),
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
    assertModuleOptions(options === null || typeof options !== 'object' ? options : { ...options, isGlobal: undefined });
    if (options.isGlobal !== undefined && typeof options.isGlobal !== 'boolean') {
      throw new LockOptionsError(optionMessage('LockModule options', 'isGlobal', 'true or false', options.isGlobal));
    }
    return super.forRoot(options);
  }

  /** Registers the module with options from a factory, class or existing provider (validated at boot). */
  static forRootAsync(options: typeof LOCK_ASYNC_OPTIONS_TYPE): DynamicModule {
    return super.forRootAsync(options);
  }
}
