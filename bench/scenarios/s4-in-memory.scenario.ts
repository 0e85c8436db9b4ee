import type { Contender } from '../contenders/contender.js';
import { measureCycles } from '../support/loops.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';

export const MEMORY_CONCURRENT_CALLERS = 100;

/**
 * Scenario 4: the in-memory provider against async-mutex (and a bare promise
 * chain): one caller on one name, then 100 concurrent callers on one name.
 * Each critical section increments a counter, which must come out exact.
 */
export async function inMemory(ctx: BenchContext, contenders: readonly Contender[]): Promise<Row[]> {
  const { runMs } = ctx.options;
  const rows: Row[] = [];
  for (const callers of [1, MEMORY_CONCURRENT_CALLERS]) {
    const variant = callers === 1 ? 'sequential, 1 name' : `${callers} concurrent, 1 name`;
    const group = await interleave(ctx, 's4', variant, 'cycles/s', contenders, ctx.options.repeats, async (c, rep) => {
      const client = await c.create(ctx.env);
      try {
        const name = `bench:s4:${c.id}:${rep}`;
        let counter = 0;
        const section = async (): Promise<void> => {
          const seen = counter;
          await Promise.resolve();
          counter = seen + 1;
        };
        for (let i = 0; i < 1_000; i++) await client.withLock(name, section);
        counter = 0;
        const r = await measureCycles(client, callers, runMs, () => name, section);
        return { throughput: r.throughput, p50: r.p50, p99: r.p99, exact: counter === r.cycles ? 1 : 0 };
      } finally {
        await client.close();
      }
    });
    addRatios(group);
    rows.push(...group);
  }
  return rows;
}
