import type { Contender } from '../contenders/contender.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';
import { CyclesPool } from './cycles.pool.js';

export const PARALLEL_CALLERS = 64;

/** Scenario 2: 64 concurrent callers in one process, each on its own name. Total cycles/s. */
export async function parallel(ctx: BenchContext, contenders: readonly Contender[]): Promise<Row[]> {
  const pool = new CyclesPool(ctx.env);
  try {
    const variant = `${PARALLEL_CALLERS} callers, distinct names`;
    const rows = await interleave(ctx, 's2', variant, 'cycles/s', contenders, ctx.options.repeats, (c, rep) =>
      pool.run(c, {
        callers: PARALLEL_CALLERS,
        ms: ctx.options.runMs,
        name: `bench:s2:${c.id}:${rep}`,
        distinct: true,
        section: 'noop',
        warmup: 2,
      }),
    );
    addRatios(rows);
    return rows;
  } finally {
    await pool.close();
  }
}
