import type { BenchEnv, Contender } from '../contenders/contender.js';
import { buildRow, type Measurement, type Row } from './results.js';

export interface BenchOptions {
  readonly quick: boolean;
  /** Repeats of the short scenarios (1, 2, 4) and of the long ones (3, 5, 6). */
  readonly repeats: number;
  readonly longRepeats: number;
  /** Length of one timed run, in ms, for the short and the long scenarios. */
  readonly runMs: number;
  readonly longRunMs: number;
}

export interface BenchContext {
  readonly env: BenchEnv;
  readonly options: BenchOptions;
  readonly log: (line: string) => void;
}

/** Something that is measured repeatedly: a contender, or an HTTP route. */
export type Subject = Pick<Contender, 'id' | 'label' | 'kind' | 'retry' | 'waits'>;

/**
 * Runs `run` for each subject, `repeats` times, interleaved (repeat 1 of
 * every subject, then repeat 2, ...) with the order rotated each round, so
 * drift of a noisy machine spreads over all of them. A subject whose first
 * run throws is reported as skipped.
 */
export async function interleave<S extends Subject>(
  ctx: BenchContext,
  scenario: string,
  variant: string,
  unit: string,
  subjects: readonly S[],
  repeats: number,
  run: (subject: S, repeat: number) => Promise<Measurement>,
): Promise<Row[]> {
  const samples = new Map<string, Measurement[]>(subjects.map((s) => [s.id, []]));
  const skipped = new Map<string, string>();
  for (let rep = 0; rep < repeats; rep++) {
    const order = subjects.map((_, i) => subjects[(i + rep) % subjects.length]!);
    for (const subject of order) {
      if (skipped.has(subject.id)) continue;
      try {
        const m = await run(subject, rep);
        samples.get(subject.id)!.push(m);
        ctx.log(`  ${scenario} ${variant} #${rep + 1} ${subject.id}: ${fmt(m.throughput!)} ${unit}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (samples.get(subject.id)!.length === 0) skipped.set(subject.id, message);
        ctx.log(`  ${scenario} ${variant} #${rep + 1} ${subject.id}: FAILED ${message}`);
      }
    }
  }
  return subjects.map((s) => buildRow(scenario, variant, s, unit, samples.get(s.id)!, skipped.get(s.id)));
}

export function fmt(n: number, digits = 0): string {
  if (n === undefined || Number.isNaN(n)) return '-';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
