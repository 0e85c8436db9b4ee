import { LockOptionsError } from '../errors/lock.errors.js';
import { telemetryPeerMissingMessage, telemetryWithoutSdkLog } from '../errors/lock.messages.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import type { LockTelemetryOptions } from './lock-telemetry-options.interface.js';
import { LockMetrics, type MetricsSource } from './lock-metrics.js';
import { LockSpans } from './lock-spans.js';
import { hasGlobalMeterProvider, hasGlobalTracerProvider, loadOpenTelemetryApi } from './opentelemetry-api.js';
import { OTHER_LOCK_NAME } from './telemetry-names.js';
import type { Meter, Tracer } from '@opentelemetry/api';

/** The locks a manager holds now (its list of held locks), read when metrics are collected. @internal */
export interface HeldLockList {
  members(): Iterable<{ readonly name: string; readonly label: string | undefined }>;
}

/** The instrumentation scope of the metrics and spans. */
const SCOPE = 'nest-lock';

/**
 * OpenTelemetry metrics and spans for a lock engine, as the module's
 * `telemetry` option says: the listener that records its events, for the
 * engine to subscribe (`storeKind`: its store's `kind`; `held`: its held
 * locks, for the gauge). Off (`false`, or `'auto'` without the package or
 * without a registered SDK): `undefined`, and the lock path runs as if
 * telemetry did not exist. @internal
 */
export function startTelemetry(
  option: boolean | 'auto' | LockTelemetryOptions | undefined,
  storeKind: string,
  held: HeldLockList,
  logger?: LockLogger,
): ((event: LockEvent) => void) | undefined {
  if (option === false) return undefined;
  const explicit = option !== undefined && option !== 'auto';
  const api = loadOpenTelemetryApi();
  if (!api) {
    if (!explicit) return undefined;
    throw new LockOptionsError(telemetryPeerMissingMessage());
  }
  const o: LockTelemetryOptions = typeof option === 'object' ? option : {};
  const wantMetrics = o.metrics !== false && (o.meterProvider !== undefined || hasGlobalMeterProvider(api));
  const wantSpans = o.spans !== false && (o.tracerProvider !== undefined || hasGlobalTracerProvider(api));
  if (!wantMetrics && !wantSpans) {
    if (explicit) {
      logger?.warn(telemetryWithoutSdkLog());
    }
    return undefined;
  }

  const names = o.lockNames === true;
  const source: MetricsSource = {
    storeKind,
    attributeName: (name, label) => label ?? (names ? name : OTHER_LOCK_NAME),
    *heldNames() {
      for (const lock of held.members()) yield lock.label ?? (names ? lock.name : OTHER_LOCK_NAME);
    },
  };
  const meter = (o.meterProvider ?? api.metrics.getMeterProvider()).getMeter(SCOPE) as Meter;
  const tracer = (o.tracerProvider ?? api.trace.getTracerProvider()).getTracer(SCOPE) as Tracer;
  const metrics = wantMetrics ? new LockMetrics(meter, source) : undefined;
  const spans = wantSpans ? new LockSpans(api, tracer, source) : undefined;
  return (event) => {
    metrics?.record(event);
    spans?.record(event);
  };
}
