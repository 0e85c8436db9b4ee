import { requirePeer } from '../shared/require-peer.cjs';

/** `@opentelemetry/api`, typed for what this library uses. @internal */
export type OpenTelemetryApi = typeof import('@opentelemetry/api');

let loaded: OpenTelemetryApi | null | undefined;

/**
 * The optional peer `@opentelemetry/api`, loaded once; `undefined` when it is
 * not installed. @internal
 */
export function loadOpenTelemetryApi(): OpenTelemetryApi | undefined {
  if (loaded === undefined) {
    try {
      loaded = requirePeer<OpenTelemetryApi>('@opentelemetry/api');
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** Whether an OpenTelemetry SDK registered a global meter provider. @internal */
export function hasGlobalMeterProvider(api: OpenTelemetryApi): boolean {
  return api.metrics.getMeterProvider().getMeter('nest-lock') !== api.createNoopMeter();
}

/** Whether an OpenTelemetry SDK registered a global tracer provider. @internal */
export function hasGlobalTracerProvider(api: OpenTelemetryApi): boolean {
  const provider = api.trace.getTracerProvider();
  return !(provider instanceof api.ProxyTracerProvider) || provider.getDelegateTracer('nest-lock') !== undefined;
}
