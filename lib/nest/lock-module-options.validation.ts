import { LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage, expected, optionPlaces } from '../errors/lock.messages.js';
import { assertDefaults, assertOptionsObject, DEFAULTS_KEYS } from '../engine/lock-options.validation.js';
import { assertStoreOptions } from '../stores/lock-store-options.validation.js';
import type { LockModuleOptions } from './lock-module-options.interface.js';

const MODULE_KEYS = new Set<string>([
  ...DEFAULTS_KEYS,
  'provider',
  'redis',
  'postgres',
  'mysql',
  'commandTimeout',
  'waitForReplicas',
  'evictionCheck',
  'verifyOnBoot',
]);

/** Checks `LockModule.forRoot()` / `forRootAsync()` options, where they come in. */
export function assertModuleOptions(options: unknown): asserts options is LockModuleOptions {
  const where = optionPlaces.moduleOptions;
  if (options === undefined) return;
  const o = assertOptionsObject(options, MODULE_KEYS, where, 'LockModule');
  assertDefaults(o, where);
  if (
    o.verifyOnBoot !== undefined &&
    o.verifyOnBoot !== false &&
    o.verifyOnBoot !== 'warn' &&
    o.verifyOnBoot !== 'fail'
  ) {
    throw new LockOptionsError(optionMessage(where, 'verifyOnBoot', expected.warnFailOrFalse, o.verifyOnBoot));
  }
  assertStoreOptions(o, where);
}
