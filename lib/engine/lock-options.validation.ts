import { LockOptionsError } from '../errors/lock.errors.js';
import { describeValue, lockNameMessage, objectInNameMessage, oneStoreMessage, optionMessage, unknownOptionMessage } from '../errors/lock.messages.js';
import { LockProvider } from '../contract/lock-provider.js';
import type { LockCallOptions, LockModuleOptions } from '../contract/lock-options.interface.js';
import { assertPostgresConnection, assertRedisConnection } from '../stores/connection-options.validation.js';
import { assertTelemetryOptions } from '../telemetry/lock-telemetry-options.validation.js';

const ON_HELD = ['throw', 'skip', 'wait'];
const CALL_KEYS = new Set(['ttl', 'onHeld', 'waitTimeout', 'renew', 'maxHold', 'holdAtLeast', 'reentrant', 'failOpen', 'signal', 'label']);

/** Checks a lock name; returns it. `where` says where the name came from, for the message. */
export function assertLockName(name: unknown, where: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new LockOptionsError(lockNameMessage(where, name));
  // `order:${dto}` with an object: every call would share one lock.
  if (name.includes('[object ')) throw new LockOptionsError(objectInNameMessage(where, name));
  return name;
}

function assertDuration(value: unknown, option: string, where: string, allowZero: boolean): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new LockOptionsError(optionMessage(where, option, `a finite number of milliseconds ${allowZero ? '>= 0' : '> 0'}`, value));
  }
}

/** Plain object with only known keys (undefined values count as absent). */
function assertOptionsObject(options: unknown, known: Set<string>, where: string, objectWhere: string): Record<string, unknown> {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LockOptionsError(optionMessage(objectWhere, 'options', 'an object', options));
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
    throw new LockOptionsError(optionMessage(where, option, 'true or false', value));
  }
}

function assertOnHeld(value: unknown, where: string): void {
  if (value !== undefined && (typeof value !== 'string' || !ON_HELD.includes(value))) {
    throw new LockOptionsError(optionMessage(where, 'onHeld', "one of 'throw', 'skip', 'wait'", value));
  }
}

/** Checks per-call options (`@Locked`, `withLock`, `acquire`, `tryAcquire`). */
export function assertCallOptions(options: unknown, where: string): asserts options is LockCallOptions | undefined {
  if (options === undefined) return;
  const o = assertOptionsObject(options, CALL_KEYS, where, where);
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.waitTimeout, 'waitTimeout', where, true);
  assertDuration(o.maxHold, 'maxHold', where, false);
  assertDuration(o.holdAtLeast, 'holdAtLeast', where, true);
  assertOnHeld(o.onHeld, where);
  assertBoolean(o.renew, 'renew', where);
  assertBoolean(o.reentrant, 'reentrant', where);
  assertBoolean(o.failOpen, 'failOpen', where);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new LockOptionsError(optionMessage(where, 'signal', 'an AbortSignal', o.signal));
  }
  if (o.label !== undefined && (typeof o.label !== 'string' || o.label.length === 0)) {
    throw new LockOptionsError(optionMessage(where, 'label', 'a non-empty string', o.label));
  }
}

const MODULE_KEYS = new Set(['provider', 'keyPrefix', 'ttl', 'onHeld', 'waitTimeout', 'renew', 'maxHold', 'onEvent', 'redis', 'postgres', 'commandTimeout', 'localHandOff', 'instanceId', 'verifyOnBoot', 'telemetry', 'waitForReplicas']);

/** Checks `LockModule.forRoot()` / `forRootAsync()` options. */
export function assertModuleOptions(options: unknown): asserts options is LockModuleOptions {
  const where = 'LockModule options';
  if (options === undefined) return;
  const o = assertOptionsObject(options, MODULE_KEYS, where, 'LockModule');
  if (o.provider !== undefined && !(o.provider instanceof LockProvider)) {
    throw new LockOptionsError(optionMessage(where, 'provider', 'an instance of a LockProvider subclass', o.provider));
  }
  if (o.keyPrefix !== undefined && typeof o.keyPrefix !== 'string') {
    throw new LockOptionsError(optionMessage(where, 'keyPrefix', 'a string', o.keyPrefix));
  }
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.waitTimeout, 'waitTimeout', where, true);
  assertDuration(o.maxHold, 'maxHold', where, false);
  assertDuration(o.commandTimeout, 'commandTimeout', where, false);
  assertOnHeld(o.onHeld, where);
  assertBoolean(o.renew, 'renew', where);
  assertBoolean(o.localHandOff, 'localHandOff', where);
  if (o.instanceId !== undefined && (typeof o.instanceId !== 'string' || o.instanceId.length === 0)) {
    throw new LockOptionsError(optionMessage(where, 'instanceId', 'a non-empty string', o.instanceId));
  }
  if (o.onEvent !== undefined && typeof o.onEvent !== 'function') {
    throw new LockOptionsError(optionMessage(where, 'onEvent', 'a function', o.onEvent));
  }
  if (o.verifyOnBoot !== undefined && o.verifyOnBoot !== false && o.verifyOnBoot !== 'warn' && o.verifyOnBoot !== 'fail') {
    throw new LockOptionsError(optionMessage(where, 'verifyOnBoot', "'warn', 'fail' or false", o.verifyOnBoot));
  }
  assertTelemetryOptions(o.telemetry, where);
  const stores = ['provider', 'redis', 'postgres'].filter((k) => o[k] !== undefined);
  if (stores.length > 1) {
    throw new LockOptionsError(oneStoreMessage(where, stores));
  }
  if (o.redis !== undefined) assertRedisConnection(o.redis, where);
  if (o.postgres !== undefined) {
    const pg = o.postgres as Record<string, unknown> | null;
    assertPostgresConnection(pg !== null && typeof pg === 'object' && 'connection' in pg ? pg.connection : pg, where);
  }
  if (o.waitForReplicas !== undefined) {
    if (!(typeof o.waitForReplicas === 'number' && Number.isInteger(o.waitForReplicas) && o.waitForReplicas >= 0)) {
      throw new LockOptionsError(`${where}: waitForReplicas must be a whole number of replicas >= 0, got ${describeValue(o.waitForReplicas)}.`);
    }
    if (o.redis === undefined) {
      throw new LockOptionsError(
        `${where}: waitForReplicas applies to the Redis store built from the redis option; with a provider of your own, pass it to new RedisLockProvider({ waitForReplicas }).`,
      );
    }
  }
}
