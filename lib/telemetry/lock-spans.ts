import type { Tracer } from '@opentelemetry/api';
import { waitSpanName, waitTimeoutSpanStatus } from '../errors/lock.messages.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import type { OpenTelemetryApi } from './opentelemetry-api.js';
import { LOCK_ATTRIBUTES, OTHER_LOCK_NAME } from './telemetry-names.js';
import type { MetricsSource } from './lock-metrics.js';

/**
 * A span for each wait that waited: one that queued behind another holder
 * and got the lock, or one that ran out of `waitTimeout`. It is recorded
 * when the answer comes, in the caller's context, so it is a child of the
 * caller's active span and covers the wait (from the call to the answer).
 * Uncontended calls record no span. @internal
 */
export class LockSpans {
  constructor(
    private readonly api: OpenTelemetryApi,
    private readonly tracer: Tracer,
    private readonly source: Pick<MetricsSource, 'storeKind' | 'attributeName'>,
  ) {}

  /** Records the span of an `answered` event that waited. */
  record(event: LockEvent): void {
    if (event.type !== 'answered' || !event.wait) return;
    const waited = (event.outcome === 'acquired' && event.queued) || event.outcome === 'timeout';
    if (!waited) return;
    const name = this.source.attributeName(event.name, event.label);
    const end = performance.timeOrigin + performance.now();
    const span = this.tracer.startSpan(
      waitSpanName(name === OTHER_LOCK_NAME ? undefined : name),
      {
        kind: this.api.SpanKind.INTERNAL,
        startTime: end - event.waitMs,
        attributes: {
          [LOCK_ATTRIBUTES.name]: name,
          [LOCK_ATTRIBUTES.storeKind]: this.source.storeKind,
          [LOCK_ATTRIBUTES.waitOutcome]: event.outcome,
          ...(event.fencingToken === undefined ? {} : { [LOCK_ATTRIBUTES.fencingToken]: event.fencingToken }),
        },
      },
      this.api.context.active(),
    );
    if (event.outcome === 'timeout') {
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: waitTimeoutSpanStatus(Math.round(event.waitMs)) });
    }
    span.end(end);
  }
}
