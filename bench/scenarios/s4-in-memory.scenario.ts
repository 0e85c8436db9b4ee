import type { Contender } from '../contenders/contender.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';
import { CyclesPool } from './cycles.pool.js';

export const MEMORY_CONCURRENT_CALLERS = 100;

/**
 * Scenario 4: the in-memory provider against async-mutex (and a bare promise
 * chain): one caller on one name, then 100 concurrent callers on one name.
 * Each section is a non-atomic read-modify-write of a counter (with an
 * `await` in between), which must come out exact.
 */
export async function inMemory(ctx: BenchContext, contenders: readonly Contender[]): Promise<Row[]> {
  const pool = new CyclesPool(ctx.env);
  const rows: Row[] = [];
  try {
    for (const callers of [1, MEMORY_CONCURRENT_CALLERS]) {
      const variant = callers === 1 ? 'sequential, 1 name' : `${callers} concurrent, 1 name`;
      const group = await interleave(ctx, 's4', variant, 'cycles/s', contenders, ctx.options.repeats, (c, rep) =>
        pool.run(c, {
          callers,
          ms: ctx.options.runMs,
          name: `bench:s4:${c.id}:${callers}:${rep}`,
          distinct: false,
          section: 'counter',
          warmup: 2_000 / callers,
        }),
      );
      addRatios(group);
      rows.push(...group);
    }
    return rows;
  } finally {
    await pool.close();
  }
}
