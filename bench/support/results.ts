import type { Contender } from '../contenders/contender.js';
import { median, spread } from './stats.js';

/** Metrics of one run of one contender; `main` is the throughput (higher is better). */
export type Measurement = Record<string, number>;

/** One line of the table: a contender (or route) in one scenario, over all repeats. */
export interface Row {
  scenario: string;
  /** Sub-case: `sequential`, `100 concurrent`, a route, ... */
  variant: string;
  id: string;
  label: string;
  kind: Contender['kind'];
  retry: Contender['retry'];
  waits: string;
  /** Name and unit of the throughput metric. */
  unit: string;
  samples: Measurement[];
  /** Median of every metric over the repeats. */
  median: Measurement;
  /** Throughput: min, max, relative spread (interquartile range / median). */
  min: number;
  max: number;
  spread: number;
  /** Throughput ratio to the raw baseline of the same scenario and variant. */
  vsRaw?: number;
  /** Throughput ratio to the best peer measured in the same scenario and variant. */
  vsBestPeer?: number;
  bestPeer?: string;
  /** Only for the contended scenario: ratio to the best peer at its default settings. */
  vsBestDefaultPeer?: number;
  /** Scenarios 3 and 6b: throughput over the no-lock ceiling's in the same run (how close to the limit). */
  vsCeiling?: number;
  bestDefaultPeer?: string;
  /** Remarks shown under the table (inexact counter, errors, ...). */
  notes: string[];
  /** Set when the contender could not run (its provider is missing, ...). */
  skipped?: string;
}

export interface Target {
  scenario: string;
  text: string;
  actual: number | undefined;
  required: number;
  op: '>=' | '<=';
  met: boolean | undefined;
}

export function buildRow(
  scenario: string,
  variant: string,
  contender: Pick<Contender, 'id' | 'label' | 'kind' | 'retry' | 'waits'>,
  unit: string,
  samples: Measurement[],
  skipped?: string,
): Row {
  const keys = new Set(samples.flatMap((s) => Object.keys(s)));
  const med: Measurement = {};
  for (const k of keys) med[k] = median(samples.map((s) => s[k]!).filter((v) => v !== undefined && !Number.isNaN(v)));
  const main = samples.map((s) => s.throughput!);
  return {
    scenario,
    variant,
    id: contender.id,
    label: contender.label,
    kind: contender.kind,
    retry: contender.retry,
    waits: contender.waits,
    unit,
    samples,
    median: med,
    min: main.length ? Math.min(...main) : NaN,
    max: main.length ? Math.max(...main) : NaN,
    spread: spread(main),
    notes: [],
    skipped,
  };
}

/** Fills `vsRaw` / `vsBestPeer` (and for `withDefaultPeer`, `vsBestDefaultPeer`) within one scenario variant. */
export function addRatios(rows: Row[], withDefaultPeer = false): void {
  const live = rows.filter((r) => !r.skipped && r.samples.length > 0);
  const raw = live.find((r) => r.kind === 'raw');
  const best = (candidates: Row[]): Row | undefined =>
    candidates.reduce<Row | undefined>(
      (b, r) => (!b || r.median.throughput! > b.median.throughput! ? r : b),
      undefined,
    );
  const bestPeer = best(live.filter((r) => r.kind === 'peer'));
  const bestDefault = best(live.filter((r) => r.kind === 'peer' && r.retry !== 'tuned'));
  for (const r of live) {
    const t = r.median.throughput!;
    if (raw && r !== raw) r.vsRaw = t / raw.median.throughput!;
    if (bestPeer && r.kind !== 'peer') {
      r.vsBestPeer = t / bestPeer.median.throughput!;
      r.bestPeer = describe(bestPeer);
    }
    if (withDefaultPeer && bestDefault && r.kind !== 'peer') {
      r.vsBestDefaultPeer = t / bestDefault.median.throughput!;
      r.bestDefaultPeer = describe(bestDefault);
    }
  }
}

export function describe(r: Pick<Row, 'label' | 'retry'>): string {
  return r.retry === '-' ? r.label : `${r.label} (${r.retry})`;
}

export function target(
  scenario: string,
  text: string,
  actual: number | undefined,
  op: '>=' | '<=',
  required: number,
): Target {
  const met =
    actual === undefined || Number.isNaN(actual) ? undefined : op === '>=' ? actual >= required : actual <= required;
  return { scenario, text, actual, required, op, met };
}
