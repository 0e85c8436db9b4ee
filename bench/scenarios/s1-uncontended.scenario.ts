import type { Contender } from '../contenders/contender.js';
import { measureCycles } from '../support/loops.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';

const noop = async (): Promise<void> => {};

/**
 * Scenario 1 (and 6a for PostgreSQL): one caller, lock + unlock cycles on
 * one name, nothing inside. Cycles/s, and p50/p99 of one cycle.
 */
export async function uncontended(ctx: BenchContext, scenario: string, contenders: readonly Contender[]): Promise<Row[]> {
  const rows = await interleave(ctx, scenario, '1 caller, 1 name', 'cycles/s', contenders, ctx.options.repeats, async (c, rep) => {
    const client = await c.create(ctx.env);
    try {
      const name = `bench:${scenario}:${c.id}:${rep}`;
      for (let i = 0; i < 20; i++) await client.withLock(name, noop); // warm-up: connections, script cache, JIT
      const { throughput, p50, p99 } = await measureCycles(client, 1, ctx.options.runMs, () => name);
      return { throughput, p50, p99 };
    } finally {
      await client.close();
    }
  });
  addRatios(rows);
  return rows;
}
