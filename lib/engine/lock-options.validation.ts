import { LockOptionsError } from '../errors/lock.errors.js';
import {
  emptyNamesMessage,
  limitWithSharedMessage,
  unsupportedLimitMessage,
  unsupportedSharedMessage,
  lockNameMessage,
  objectInNameMessage,
  optionMessage,
  unknownOptionMessage,
  expected,
  optionPlaces,
} from '../errors/lock.messages.js';
import type { LockCallOptions } from '../contract/lock-options.interface.js';
import type { LockManagerOptions } from './lock-manager-options.interface.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';
import type { LockProvider } from '../contract/lock-provider.js';
import { assertTelemetryOptions } from '../telemetry/lock-telemetry-options.validation.js';
import { assertDuration, assertNameText } from '../contract/lock-limits.validation.js';
import { MAX_KEY_PREFIX_LENGTH, MAX_LOCK_NAME_LENGTH } from '../contract/lock.constants.js';

const ON_HELD = ['throw', 'skip', 'wait'];
const MODES = ['shared', 'exclusive'];
const CALL_KEYS = new Set([
  'ttl',
  'onHeld',
  'waitTimeout',
  'renew',
  'maxHold',
  'holdAtLeast',
  'reentrant',
  'failOpen',
  'limit',
  'mode',
  'signal',
  'label',
]);
/** The defaults a manager takes (and `LockModule.forRoot()` with them). @internal */
export const DEFAULTS_KEYS = [
  'keyPrefix',
  'ttl',
  'onHeld',
  'waitTimeout',
  'renew',
  'maxHold',
  'onEvent',
  'localHandOff',
  'instanceId',
  'telemetry',
] as const;
const MANAGER_KEYS = new Set<string>(DEFAULTS_KEYS);

/**
 * Checks a lock name (a non-empty string of at most {@link MAX_LOCK_NAME_LENGTH}
 * UTF-16 code units, no control character, no lone surrogate); returns it.
 * `where` says where the name came from, for the message.
 */
export function assertLockName(name: unknown, where: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new LockOptionsError(lockNameMessage(where, name));
  assertNameText(name, MAX_LOCK_NAME_LENGTH, where, optionPlaces.lockName);
  // `order:${dto}` with an object: every call would share one lock.
  if (name.includes('[object ')) throw new LockOptionsError(objectInNameMessage(where, name));
  return name;
}

/**
 * Checks one lock name or a list of them; returns the name, or the list in
 * its canonical order (sorted, duplicates collapsed; one name left: that
 * name). `where` says where the names came from, for the message.
 */
export function assertLockNames(names: unknown, where: string): string | readonly string[] {
  if (!Array.isArray(names)) return assertLockName(names, where);
  if (names.length === 0) throw new LockOptionsError(emptyNamesMessage(where));
  for (let i = 0; i < names.length; i++) assertLockName(names[i], `${where} (names[${i}])`);
  const sorted = [...new Set(names as string[])].sort();
  return sorted.length === 1 ? sorted[0] : sorted;
}

/** Checks a plain object with only known keys (undefined values count as absent). @internal */
export function assertOptionsObject(
  options: unknown,
  known: ReadonlySet<string>,
  where: string,
  objectWhere: string,
): Record<string, unknown> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LockOptionsError(optionMessage(objectWhere, 'options', expected.object, options));
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] !== undefined && !known.has(key)) {
      throw new LockOptionsError(unknownOptionMessage(where, key, known));
    }
  }
  return o;
}

function assertBoolean(value: unknown, option: string, where: string): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new LockOptionsError(optionMessage(where, option, expected.boolean, value));
  }
}

function assertOnHeld(value: unknown, where: string): void {
  if (value !== undefined && (typeof value !== 'string' || !ON_HELD.includes(value))) {
    throw new LockOptionsError(optionMessage(where, 'onHeld', expected.onHeld, value));
  }
}

/** Checks `limit` (an integer >= 1) and `mode`, and that a shared lock has no limit. */
function assertLimitAndMode(limit: unknown, mode: unknown, where: string): void {
  if (limit !== undefined && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= 1)) {
    throw new LockOptionsError(optionMessage(where, 'limit', expected.integerFrom1, limit));
  }
  if (mode !== undefined && (typeof mode !== 'string' || !MODES.includes(mode))) {
    throw new LockOptionsError(optionMessage(where, 'mode', expected.mode, mode));
  }
  if (limit !== undefined && mode === 'shared') throw new LockOptionsError(limitWithSharedMessage(where, limit));
}

/** Refuses a semaphore or a shared lock on a store whose `supports` lacks it (it would take a plain lock instead). @internal */
export function assertSupported(provider: LockProvider, name: string, options: ResolvedCallOptions): void {
  if (options.limit !== undefined && provider.supports?.limit !== true) {
    throw new LockOptionsError(unsupportedLimitMessage(name, provider.kind, options.limit), { lockName: name });
  }
  if (options.mode === 'shared' && provider.supports?.shared !== true) {
    throw new LockOptionsError(unsupportedSharedMessage(name, provider.kind), { lockName: name });
  }
}

/**
 * Checks per-call options (`@Locked`, `withLock`, `acquire`, `tryAcquire`).
 * `where` may be a function: it is called only to word an error, so a call
 * with good options does not build it.
 */
export function assertCallOptions(
  options: unknown,
  where: string | (() => string),
): asserts options is LockCallOptions | undefined {
  if (options === undefined) return;
  if (typeof where === 'string') return checkCallOptions(options, where);
  try {
    checkCallOptions(options, '');
  } catch {
    checkCallOptions(options, where());
  }
}

function checkCallOptions(options: unknown, where: string): void {
  const o = assertOptionsObject(options, CALL_KEYS, where, where);
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.waitTimeout, 'waitTimeout', where, true);
  assertDuration(o.maxHold, 'maxHold', where, false);
  assertDuration(o.holdAtLeast, 'holdAtLeast', where, true);
  assertOnHeld(o.onHeld, where);
  assertBoolean(o.renew, 'renew', where);
  assertBoolean(o.reentrant, 'reentrant', where);
  assertBoolean(o.failOpen, 'failOpen', where);
  assertLimitAndMode(o.limit, o.mode, where);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new LockOptionsError(optionMessage(where, 'signal', expected.abortSignal, o.signal));
  }
  if (o.label !== undefined && (typeof o.label !== 'string' || o.label.length === 0)) {
    throw new LockOptionsError(optionMessage(where, 'label', expected.nonEmptyString, o.label));
  }
}

/** Checks the defaults of a manager ({@link DEFAULTS_KEYS}) in an options object already known to be one. @internal */
export function assertDefaults(o: Record<string, unknown>, where: string): void {
  if (o.keyPrefix !== undefined && typeof o.keyPrefix !== 'string') {
    throw new LockOptionsError(optionMessage(where, 'keyPrefix', expected.string, o.keyPrefix));
  }
  if (o.keyPrefix !== undefined) assertNameText(o.keyPrefix, MAX_KEY_PREFIX_LENGTH, where, 'keyPrefix');
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.waitTimeout, 'waitTimeout', where, true);
  assertDuration(o.maxHold, 'maxHold', where, false);
  assertOnHeld(o.onHeld, where);
  assertBoolean(o.renew, 'renew', where);
  assertBoolean(o.localHandOff, 'localHandOff', where);
  if (o.instanceId !== undefined && (typeof o.instanceId !== 'string' || o.instanceId.length === 0)) {
    throw new LockOptionsError(optionMessage(where, 'instanceId', expected.nonEmptyString, o.instanceId));
  }
  if (o.onEvent !== undefined && typeof o.onEvent !== 'function') {
    throw new LockOptionsError(optionMessage(where, 'onEvent', expected.function, o.onEvent));
  }
  assertTelemetryOptions(o.telemetry, where);
}

/** Checks the options of `new LockManager()`, without its `provider` and `logger`. */
export function assertManagerOptions(
  options: unknown,
): asserts options is Omit<LockManagerOptions, 'provider' | 'logger'> {
  const where = optionPlaces.moduleOptions;
  assertDefaults(assertOptionsObject(options, MANAGER_KEYS, where, 'LockModule'), where);
}
