import { LockOptionsError } from './lock.errors.js';
import { LockProvider } from './lock-provider.interface.js';
import type { LockCallOptions, LockModuleOptions } from './lock-options.interface.js';

const ON_HELD = ['throw', 'skip', 'wait'];
const CALL_KEYS = new Set(['ttl', 'onHeld', 'waitTimeout', 'renew', 'maxHold', 'holdAtLeast', 'reentrant', 'failOpen', 'signal']);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** Checks a lock name; returns it. `where` says where the name came from, for the message. */
export function assertLockName(name: unknown, where: string): string {
  if (typeof name !== 'string') {
    throw new LockOptionsError(`${where}: a lock name must be a non-empty string, got ${describe(name)}.`);
  }
  if (name.length === 0) {
    throw new LockOptionsError(`${where}: a lock name must be a non-empty string, got "".`);
  }
  return name;
}

function assertDuration(value: unknown, option: string, where: string, allowZero: boolean): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new LockOptionsError(
      `${where}: ${option} must be a finite number of milliseconds ${allowZero ? '>= 0' : '> 0'}, got ${describe(value)}.`,
    );
  }
}

/** Plain object with only known keys (undefined values count as absent). */
function assertOptionsObject(options: unknown, known: Set<string>, where: string, label: string): Record<string, unknown> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LockOptionsError(`${where}${label} must be an object, got ${describe(options)}.`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] !== undefined && !known.has(key)) {
      throw new LockOptionsError(`${where}: unknown option "${key}". Known options: ${[...known].join(', ')}.`);
    }
  }
  return o;
}

function assertBoolean(value: unknown, option: string, where: string): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new LockOptionsError(`${where}: ${option} must be true or false, got ${describe(value)}.`);
  }
}

function assertOnHeld(value: unknown, where: string): void {
  if (value !== undefined && (typeof value !== 'string' || !ON_HELD.includes(value))) {
    throw new LockOptionsError(`${where}: onHeld must be one of 'throw', 'skip', 'wait', got ${describe(value)}.`);
  }
}

/** Checks per-call options (`@Locked`, `withLock`, `acquire`, `tryAcquire`). */
export function assertCallOptions(options: unknown, where: string): asserts options is LockCallOptions | undefined {
  if (options === undefined) return;
  const o = assertOptionsObject(options, CALL_KEYS, where, ': options');
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.waitTimeout, 'waitTimeout', where, true);
  assertDuration(o.maxHold, 'maxHold', where, false);
  assertDuration(o.holdAtLeast, 'holdAtLeast', where, true);
  assertOnHeld(o.onHeld, where);
  assertBoolean(o.renew, 'renew', where);
  assertBoolean(o.reentrant, 'reentrant', where);
  assertBoolean(o.failOpen, 'failOpen', where);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new LockOptionsError(`${where}: signal must be an AbortSignal, got ${describe(o.signal)}.`);
  }
}

const MODULE_KEYS = new Set(['provider', 'keyPrefix', 'ttl', 'onHeld', 'waitTimeout', 'renew', 'maxHold', 'onEvent', 'redis', 'postgres', 'commandTimeout', 'localHandOff', 'instanceId']);

/** Checks `LockModule.forRoot()` / `forRootAsync()` options. */
export function assertModuleOptions(options: unknown): asserts options is LockModuleOptions {
  const where = 'LockModule options';
  if (options === undefined) return;
  const o = assertOptionsObject(options, MODULE_KEYS, where, '');
  if (o.provider !== undefined && !(o.provider instanceof LockProvider)) {
    throw new LockOptionsError(`${where}: provider must be an instance of a LockProvider subclass, got ${describe(o.provider)}.`);
  }
  if (o.keyPrefix !== undefined && typeof o.keyPrefix !== 'string') {
    throw new LockOptionsError(`${where}: keyPrefix must be a string, got ${describe(o.keyPrefix)}.`);
  }
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.waitTimeout, 'waitTimeout', where, true);
  assertDuration(o.maxHold, 'maxHold', where, false);
  assertDuration(o.commandTimeout, 'commandTimeout', where, false);
  assertOnHeld(o.onHeld, where);
  assertBoolean(o.renew, 'renew', where);
  assertBoolean(o.localHandOff, 'localHandOff', where);
  if (o.instanceId !== undefined && (typeof o.instanceId !== 'string' || o.instanceId.length === 0)) {
    throw new LockOptionsError(`${where}: instanceId must be a non-empty string, got ${describe(o.instanceId)}.`);
  }
  if (o.onEvent !== undefined && typeof o.onEvent !== 'function') {
    throw new LockOptionsError(`${where}: onEvent must be a function, got ${describe(o.onEvent)}.`);
  }
  const stores = ['provider', 'redis', 'postgres'].filter((k) => o[k] !== undefined);
  if (stores.length > 1) {
    throw new LockOptionsError(`${where}: give only one of provider, redis, postgres; got ${stores.join(' and ')}.`);
  }
}
