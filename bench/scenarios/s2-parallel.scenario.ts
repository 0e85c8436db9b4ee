import type { Contender } from '../contenders/contender.js';
import { measureCycles } from '../support/loops.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';

export const PARALLEL_CALLERS = 64;
const noop = async (): Promise<void> => {};

/** Scenario 2: 64 concurrent callers in one process, each on its own name. Total cycles/s. */
export async function parallel(ctx: BenchContext, contenders: readonly Contender[]): Promise<Row[]> {
  const variant = `${PARALLEL_CALLERS} callers, distinct names`;
  const rows = await interleave(ctx, 's2', variant, 'cycles/s', contenders, ctx.options.repeats, async (c, rep) => {
    const client = await c.create(ctx.env);
    try {
      const name = (caller: number): string => `bench:s2:${c.id}:${rep}:${caller}`;
      await Promise.all(Array.from({ length: PARALLEL_CALLERS }, (_, i) => client.withLock(name(i), noop)));
      const { throughput, p50, p99 } = await measureCycles(client, PARALLEL_CALLERS, ctx.options.runMs, name);
      return { throughput, p50, p99 };
    } finally {
      await client.close();
    }
  });
  addRatios(rows);
  return rows;
}
