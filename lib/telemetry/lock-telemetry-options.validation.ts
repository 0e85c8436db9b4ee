import { LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage, unknownOptionMessage, expected } from '../errors/lock.messages.js';

const TELEMETRY_KEYS = new Set(['lockNames', 'metrics', 'spans', 'meterProvider', 'tracerProvider']);

/** Checks the module's `telemetry` option. @internal */
export function assertTelemetryOptions(value: unknown, where: string): void {
  if (value === undefined || value === true || value === false || value === 'auto') return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new LockOptionsError(optionMessage(where, 'telemetry', expected.telemetry, value));
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (o[key] !== undefined && !TELEMETRY_KEYS.has(key)) {
      throw new LockOptionsError(unknownOptionMessage(`${where} (telemetry)`, key, TELEMETRY_KEYS));
    }
  }
  for (const key of ['lockNames', 'metrics', 'spans']) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') {
      throw new LockOptionsError(optionMessage(where, `telemetry.${key}`, expected.boolean, o[key]));
    }
  }
  if (o.meterProvider !== undefined && typeof (o.meterProvider as { getMeter?: unknown })?.getMeter !== 'function') {
    throw new LockOptionsError(
      optionMessage(where, 'telemetry.meterProvider', expected.meterProvider, o.meterProvider),
    );
  }
  if (
    o.tracerProvider !== undefined &&
    typeof (o.tracerProvider as { getTracer?: unknown })?.getTracer !== 'function'
  ) {
    throw new LockOptionsError(
      optionMessage(where, 'telemetry.tracerProvider', expected.tracerProvider, o.tracerProvider),
    );
  }
}
