import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { LockModuleOptions } from './lock-module-options.interface.js';

/** Extras of `forRoot` / `forRootAsync`: `isGlobal` (default `true`, so `@Locked` works in every module). */
export interface LockModuleExtras {
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: ConfigurableLockModule,
  MODULE_OPTIONS_TOKEN: LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<LockModuleOptions>({ moduleName: 'Lock' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createLockOptions')
  .setExtras<LockModuleExtras>({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/**
 * A class that builds the module options, for `forRootAsync({ useClass })` or
 * `forRootAsync({ useExisting })`.
 *
 * @example
 * ```ts
 * @Injectable()
 * class LockConfig implements LockOptionsFactory {
 *   constructor(private readonly config: ConfigService) {}
 *   createLockOptions(): LockModuleOptions {
 *     return { redis: this.config.getOrThrow('REDIS_URL'), ttl: 60_000 };
 *   }
 * }
 * LockModule.forRootAsync({ imports: [ConfigModule], useClass: LockConfig })
 * ```
 */
export interface LockOptionsFactory {
  createLockOptions(): LockModuleOptions | Promise<LockModuleOptions>;
}
