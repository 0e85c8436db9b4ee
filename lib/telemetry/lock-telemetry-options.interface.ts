/**
 * Settings of the OpenTelemetry metrics and spans (`telemetry` in the module
 * options). Every field is optional.
 *
 * @example
 * ```ts
 * LockModule.forRoot({ redis: process.env.REDIS_URL, telemetry: { lockNames: false, spans: true } })
 * ```
 */
export interface LockTelemetryOptions {
  /**
   * Record the lock name itself as the `nest_lock.name` attribute when a call
   * has no `label`. Names often carry ids (`account:42`), which multiplies
   * the time series; leave it `false` (default) unless names are a small,
   * fixed set. Calls without a label are then recorded as `_OTHER`.
   */
  lockNames?: boolean;
  /** Record metrics. Default `true`. */
  metrics?: boolean;
  /** Record a span for each wait that queued behind another holder (or timed out). Default `true`. */
  spans?: boolean;
  /**
   * An OpenTelemetry `MeterProvider`. Default: the global one. (Typed
   * loosely, so that apps without `@opentelemetry/api` still compile.)
   */
  meterProvider?: { getMeter(name: string, version?: string): unknown };
  /** An OpenTelemetry `TracerProvider`. Default: the global one. */
  tracerProvider?: { getTracer(name: string, version?: string): unknown };
}
