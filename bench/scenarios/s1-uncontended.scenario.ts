import type { Contender } from '../contenders/contender.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';
import { CyclesPool } from './cycles.pool.js';

/**
 * Scenario 1 (and 6a for PostgreSQL): one caller, lock + unlock cycles on
 * one name, nothing inside. Cycles/s, and p50/p99 of one cycle.
 */
export async function uncontended(ctx: BenchContext, scenario: string, contenders: readonly Contender[]): Promise<Row[]> {
  const pool = new CyclesPool(ctx.env);
  try {
    const rows = await interleave(ctx, scenario, '1 caller, 1 name', 'cycles/s', contenders, ctx.options.repeats, (c, rep) =>
      pool.run(c, { callers: 1, ms: ctx.options.runMs, name: `bench:${scenario}:${c.id}:${rep}`, distinct: false, section: 'noop', warmup: 50 }),
    );
    addRatios(rows);
    return rows;
  } finally {
    await pool.close();
  }
}
