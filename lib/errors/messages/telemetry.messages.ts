/** OpenTelemetry: the instruments' descriptions, the wait span's name and status, and what the module says about the telemetry option. @internal */

/** The description of each instrument, by its key in `LOCK_METRICS`. */
export const metricDescriptions = {
  waitDuration:
    'Time from a call for a lock to its answer (granted, held elsewhere, timed out, store failed, aborted).',
  waitActive: 'Calls waiting for a lock now.',
  holdDuration: 'Time a lock was held, from grant to release or loss.',
  leaseLosses: 'Leases lost while held (expired before renewal, taken over, maxHold reached).',
  holdActive: 'Locks this process holds now.',
};

/** The span of a wait: `lock wait <name>`, or `lock wait` when names are not recorded. */
export const waitSpanName = (name: string | undefined): string =>
  name === undefined ? 'lock wait' : `lock wait ${name}`;

export const waitTimeoutSpanStatus = (waitedMs: number): string => `waitTimeout passed after ${waitedMs} ms`;

export const telemetryPeerMissingMessage = (): string =>
  "LockModule options: telemetry needs the '@opentelemetry/api' package (an optional peer dependency): npm install @opentelemetry/api, " +
  "or set telemetry: 'auto' (on only when it is installed) or false.";

export const telemetryWithoutSdkLog = (): string =>
  'LockModule telemetry is on, but no OpenTelemetry SDK is registered yet and no meterProvider/tracerProvider was given: ' +
  'no lock metrics or spans will be recorded. Start the OpenTelemetry SDK before the application.';
