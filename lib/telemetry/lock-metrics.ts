import type { Attributes, Counter, Histogram, Meter, ObservableResult } from '@opentelemetry/api';
import { metricDescriptions } from '../errors/lock.messages.js';
import type { LockEvent, LockOutcome } from '../contract/lock-events.interface.js';
import { LOCK_ATTRIBUTES, LOCK_METRICS } from './telemetry-names.js';

/** What the metrics read from the lock engine. @internal */
export interface MetricsSource {
  /** `LockProvider.kind`. */
  readonly storeKind: string;
  /** The `nest_lock.name` value of a lock. */
  attributeName(name: string, label: string | undefined): string;
  /** The locks held now, as `nest_lock.name` values (read at collection only). */
  heldNames(): Iterable<string>;
}

/** Wait bucket bounds in s: from a local grant (µs) to a long queue. */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Hold bucket bounds in s: from a short critical section to an hour-long job. */
const HOLD_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
/** Names whose attribute sets are kept for reuse (labels are few; names, when recorded, may not be). */
const MAX_CACHED = 1_000;

/** The attribute sets of one `nest_lock.name`: alone, and with each wait or hold outcome. */
interface NameAttributes {
  readonly name: Attributes;
  readonly wait: Record<string, Attributes | undefined>;
  readonly hold: Record<string, Attributes | undefined>;
}

const WAIT_OUTCOME: Record<LockOutcome, string> = {
  acquired: 'acquired',
  held: 'held',
  timeout: 'timeout',
  'store-error': 'store_error',
  aborted: 'aborted',
};

/**
 * The lock metrics (see {@link LOCK_METRICS}), recorded from lock events.
 * Attribute sets are cached per name and outcome (found by the name, then
 * the outcome: no key string is built per record), so recording allocates
 * nothing once a name was seen. @internal
 */
export class LockMetrics {
  private readonly waitDuration: Histogram;
  /** Calls waiting now, per name: counted here and observed at collection (cheaper per call than an SDK up-down counter). */
  private readonly waiting = new Map<string, number>();
  private readonly holdDuration: Histogram;
  private readonly leaseLosses: Counter;
  private readonly attributes = new Map<string, NameAttributes>();
  /** Names seen held, so that one no longer held reports 0 rather than vanishing. */
  private readonly heldSeen = new Set<string>();

  constructor(
    meter: Meter,
    private readonly source: MetricsSource,
  ) {
    this.waitDuration = meter.createHistogram(LOCK_METRICS.waitDuration, {
      unit: 's',
      description: metricDescriptions.waitDuration,
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    });
    meter
      .createObservableUpDownCounter(LOCK_METRICS.waitActive, {
        unit: '{request}',
        description: metricDescriptions.waitActive,
      })
      .addCallback((result) => this.observeWaiting(result));
    this.holdDuration = meter.createHistogram(LOCK_METRICS.holdDuration, {
      unit: 's',
      description: metricDescriptions.holdDuration,
      advice: { explicitBucketBoundaries: HOLD_BUCKETS },
    });
    this.leaseLosses = meter.createCounter(LOCK_METRICS.leaseLosses, {
      unit: '{lease}',
      description: metricDescriptions.leaseLosses,
    });
    meter
      .createObservableUpDownCounter(LOCK_METRICS.holdActive, {
        unit: '{lock}',
        description: metricDescriptions.holdActive,
      })
      .addCallback((result) => this.observeHeld(result));
  }

  /** Records what `event` tells. */
  record(event: LockEvent): void {
    switch (event.type) {
      case 'waiting': {
        const name = this.source.attributeName(event.name, event.label);
        this.waiting.set(name, (this.waiting.get(name) ?? 0) + 1);
        return;
      }
      case 'answered': {
        const name = this.source.attributeName(event.name, event.label);
        if (event.wait) this.waiting.set(name, (this.waiting.get(name) ?? 1) - 1);
        this.waitDuration.record(event.waitMs / 1000, this.outcomeAttrs(name, 'wait', WAIT_OUTCOME[event.outcome]));
        return;
      }
      case 'released':
        this.holdDuration.record(
          event.heldMs / 1000,
          this.outcomeAttrs(this.source.attributeName(event.name, event.label), 'hold', 'released'),
        );
        return;
      case 'lost': {
        const name = this.source.attributeName(event.name, event.label);
        this.holdDuration.record(event.heldMs / 1000, this.outcomeAttrs(name, 'hold', 'lost'));
        this.leaseLosses.add(1, this.attrs(name).name);
        return;
      }
    }
  }

  private observeWaiting(result: ObservableResult): void {
    for (const [name, count] of this.waiting) {
      result.observe(count, this.attrs(name).name);
      // Reported once at 0, then forgotten: names come and go.
      if (count === 0) this.waiting.delete(name);
    }
  }

  private observeHeld(result: ObservableResult): void {
    const counts = new Map<string, number>();
    for (const name of this.source.heldNames()) counts.set(name, (counts.get(name) ?? 0) + 1);
    for (const name of this.heldSeen) if (!counts.has(name)) counts.set(name, 0);
    for (const [name, count] of counts) {
      if (this.heldSeen.size < MAX_CACHED || count > 0) this.heldSeen.add(name);
      result.observe(count, this.attrs(name).name);
      if (count === 0) this.heldSeen.delete(name);
    }
  }

  /** The attribute sets of a name, cached. */
  private attrs(name: string): NameAttributes {
    let sets = this.attributes.get(name);
    if (sets === undefined) {
      sets = {
        name: { [LOCK_ATTRIBUTES.name]: name, [LOCK_ATTRIBUTES.storeKind]: this.source.storeKind },
        wait: {},
        hold: {},
      };
      if (this.attributes.size < MAX_CACHED) this.attributes.set(name, sets);
    }
    return sets;
  }

  /** The attribute set of a name with a wait or hold outcome, cached. */
  private outcomeAttrs(name: string, kind: 'wait' | 'hold', outcome: string): Attributes {
    const sets = this.attrs(name);
    const key = kind === 'wait' ? LOCK_ATTRIBUTES.waitOutcome : LOCK_ATTRIBUTES.holdOutcome;
    return (sets[kind][outcome] ??= { ...sets.name, [key]: outcome });
  }
}
