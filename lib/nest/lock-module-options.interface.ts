import type { LockManagerOptions } from '../engine/lock-manager-options.interface.js';
import type { LockStoreOptions } from '../stores/lock-store-options.interface.js';

/**
 * Options of `LockModule.forRoot()` / `forRootAsync()`: the store, and the
 * defaults of every call.
 *
 * @example
 * ```ts
 * LockModule.forRoot({ ttl: 60_000, onHeld: 'wait', waitTimeout: 5_000 })
 * ```
 */
export interface LockModuleOptions extends Omit<LockManagerOptions, 'provider' | 'logger'>, LockStoreOptions {
  /**
   * At boot, check once that the store answers (a ping bounded by
   * `commandTimeout`): `'warn'` (default) logs the cause and boots anyway,
   * `'fail'` stops the boot, `false` skips it. Not used by the in-memory store.
   */
  verifyOnBoot?: 'warn' | 'fail' | false;
}
