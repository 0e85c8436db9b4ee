import { LockOptionsError } from '../lock.errors.js';
import { describeValue as describe } from '../lock.messages.js';

const TELEMETRY_KEYS = new Set(['lockNames', 'metrics', 'spans', 'meterProvider', 'tracerProvider']);

/** Checks the module's `telemetry` option. @internal */
export function assertTelemetryOptions(value: unknown, where: string): void {
  if (value === undefined || value === true || value === false || value === 'auto') return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new LockOptionsError(`${where}: telemetry must be true, false, 'auto' or an options object, got ${describe(value)}.`);
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] !== undefined && !TELEMETRY_KEYS.has(key)) {
      throw new LockOptionsError(`${where}: unknown telemetry option "${key}". Known options: ${[...TELEMETRY_KEYS].join(', ')}.`);
    }
  }
  for (const key of ['lockNames', 'metrics', 'spans']) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') {
      throw new LockOptionsError(`${where}: telemetry.${key} must be true or false, got ${describe(o[key])}.`);
    }
  }
  if (o.meterProvider !== undefined && typeof (o.meterProvider as { getMeter?: unknown })?.getMeter !== 'function') {
    throw new LockOptionsError(`${where}: telemetry.meterProvider must be an OpenTelemetry MeterProvider (with getMeter()), got ${describe(o.meterProvider)}.`);
  }
  if (o.tracerProvider !== undefined && typeof (o.tracerProvider as { getTracer?: unknown })?.getTracer !== 'function') {
    throw new LockOptionsError(`${where}: telemetry.tracerProvider must be an OpenTelemetry TracerProvider (with getTracer()), got ${describe(o.tracerProvider)}.`);
  }
}
