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

/** What telemetry needs from the lock engine. @internal */
export interface TelemetryHost {
  readonly provider: { readonly kind: string };
  subscribe(listener: (event: LockEvent) => void): () => void;
  heldLocks(): Iterable<{ readonly name: string; readonly label: string | undefined }>;
}

/** The instrumentation scope of the metrics and spans. */
const SCOPE = 'nest-lock';

/**
 * Wires OpenTelemetry metrics and spans to a lock engine, as the module's
 * `telemetry` option says. Off (`false`, or `'auto'` without the package or
 * without a registered SDK): nothing is subscribed, and the lock path runs
 * as if telemetry did not exist. Returns the function that unsubscribes, if
 * it subscribed. @internal
 */
export function startTelemetry(
  host: TelemetryHost,
  option: boolean | 'auto' | LockTelemetryOptions | undefined,
  logger?: LockLogger,
): (() => void) | undefined {
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
    storeKind: host.provider.kind,
    attributeName: (name, label) => label ?? (names ? name : OTHER_LOCK_NAME),
    *heldNames() {
      for (const lock of host.heldLocks()) yield lock.label ?? (names ? lock.name : OTHER_LOCK_NAME);
    },
  };
  const meter = (o.meterProvider ?? api.metrics.getMeterProvider()).getMeter(SCOPE) as Meter;
  const tracer = (o.tracerProvider ?? api.trace.getTracerProvider()).getTracer(SCOPE) as Tracer;
  const metrics = wantMetrics ? new LockMetrics(meter, source) : undefined;
  const spans = wantSpans ? new LockSpans(api, tracer, source) : undefined;
  return host.subscribe((event) => {
    metrics?.record(event);
    spans?.record(event);
  });
}
