/** Small statistics helpers for the benchmark (no dependency). */

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Linear-interpolated quantile, `q` in [0, 1]. NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Relative spread of repeated measurements: the interquartile range over the
 * median (robust to the one run a busy machine spoils; min and max are kept too).
 */
export function spread(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = median(values);
  return m === 0 ? 0 : (quantile(values, 0.75) - quantile(values, 0.25)) / m;
}

export const now = (): number => performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Latency recorder with a hard cap on stored samples, so memory stays bounded. */
export class Latencies {
  private readonly samples: number[] = [];
  constructor(private readonly cap = 200_000) {}
  add(ms: number): void {
    if (this.samples.length < this.cap) this.samples.push(ms);
  }
  get count(): number {
    return this.samples.length;
  }
  p(q: number): number {
    return quantile(this.samples, q);
  }
}

/**
 * A caller's place in a shared order of sections: told the global number of
 * each section a caller enters (scenario 3's counter), it counts the sections
 * of other callers that ran since that caller's previous one. Under strict
 * FIFO order with `callers` looping callers, every count after a caller's
 * first is `callers - 1`.
 */
export class SectionOrder {
  private readonly last: number[];
  /** Counts, one per section after each caller's first (up to `maxSamples`). */
  readonly between: number[] = [];
  max = 0;

  constructor(
    callers: number,
    private readonly maxSamples = Infinity,
  ) {
    this.last = new Array<number>(callers).fill(-1);
  }

  entered(caller: number, section: number): void {
    const previous = this.last[caller]!;
    this.last[caller] = section;
    if (previous < 0) return;
    const others = section - previous - 1;
    if (others > this.max) this.max = others;
    if (this.between.length < this.maxSamples) this.between.push(others);
  }
}
