import { LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage, unknownOptionMessage, expected, optionPlaces } from '../errors/lock.messages.js';
import type { CampaignOptions } from './leader-options.interface.js';
import { assertDuration, assertNameText } from '../contract/lock-limits.validation.js';
import { MAX_LOCK_NAME_LENGTH } from '../contract/lock.constants.js';

const KEYS = new Set(['ttl', 'retryDelay', 'instanceId', 'run']);

/** Checks a leader name (the rules of a lock name: {@link MAX_LOCK_NAME_LENGTH} UTF-16 code units at most, no control character, no lone surrogate); returns it. */
export function assertLeaderName(name: unknown, where: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LockOptionsError(optionMessage(where, optionPlaces.aLeaderName, expected.nonEmptyString, name));
  }
  assertNameText(name, MAX_LOCK_NAME_LENGTH, where, optionPlaces.leaderName);
  return name;
}

/** Checks `@Leader()` / `campaign()` options. */
export function assertLeaderOptions(options: unknown, where: string): asserts options is CampaignOptions | undefined {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LockOptionsError(optionMessage(where, 'options', expected.leaderOptions, options));
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] !== undefined && !KEYS.has(key)) {
      throw new LockOptionsError(unknownOptionMessage(where, key, KEYS));
    }
  }
  assertDuration(o.ttl, 'ttl', where, false);
  assertDuration(o.retryDelay, 'retryDelay', where, true);
  if (o.instanceId !== undefined) assertInstanceId(o.instanceId, where);
  if (o.run !== undefined && typeof o.run !== 'function') {
    throw new LockOptionsError(optionMessage(where, 'run', expected.function, o.run));
  }
}

/** Checks an instance id. */
export function assertInstanceId(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new LockOptionsError(optionMessage(where, 'instanceId', expected.nonEmptyString, value));
  }
  return value;
}
