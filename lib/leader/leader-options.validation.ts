import { LockOptionsError } from '../lock.errors.js';
import type { CampaignOptions } from './leader-options.interface.js';

const KEYS = new Set(['ttl', 'retryDelay', 'instanceId', 'run']);

/** Checks a leader name; returns it. */
export function assertLeaderName(name: unknown, where: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LockOptionsError(`${where}: a leader name must be a non-empty string, got ${typeof name === 'string' ? '""' : typeof name}.`);
  }
  return name;
}

/** Checks `@Leader()` / `campaign()` options. */
export function assertLeaderOptions(options: unknown, where: string): asserts options is CampaignOptions | undefined {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LockOptionsError(`${where}: options must be an object such as { ttl: 15000 }, got ${options === null ? 'null' : typeof options}.`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] !== undefined && !KEYS.has(key)) {
      throw new LockOptionsError(`${where}: unknown option "${key}". Known options: ${[...KEYS].join(', ')}.`);
    }
  }
  for (const [key, min] of [['ttl', 1], ['retryDelay', 0]] as const) {
    const v = o[key];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= min)) {
      throw new LockOptionsError(`${where}: ${key} must be a finite number of milliseconds ${min === 0 ? '>= 0' : '> 0'}, got ${String(v)}.`);
    }
  }
  if (o.instanceId !== undefined) assertInstanceId(o.instanceId, where);
  if (o.run !== undefined && typeof o.run !== 'function') {
    throw new LockOptionsError(`${where}: run must be a function, got ${typeof o.run}.`);
  }
}

/** Checks an instance id. */
export function assertInstanceId(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new LockOptionsError(`${where}: instanceId must be a non-empty string, got ${typeof value === 'string' ? '""' : typeof value}.`);
  }
  return value;
}
