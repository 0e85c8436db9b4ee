import type { Contender } from '../contenders/contender.js';
import type { BenchRedis } from '../support/redis-server.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';
import { CyclesPool } from './cycles.pool.js';

/**
 * Scenario 1 (and 6a for PostgreSQL): one caller, lock + unlock cycles on
 * one name, nothing inside. Cycles/s, and p50/p99 of one cycle; with
 * `redis` (the bench's own server, which nothing else uses meanwhile), also
 * the server's CPU time per cycle: what each lock's commands and scripts
 * cost Redis.
 */
export async function uncontended(
  ctx: BenchContext,
  scenario: string,
  contenders: readonly Contender[],
  redis?: BenchRedis,
): Promise<Row[]> {
  const pool = new CyclesPool(ctx.env);
  try {
    const rows = await interleave(
      ctx,
      scenario,
      '1 caller, 1 name',
      'cycles/s',
      contenders,
      ctx.options.repeats,
      async (c, rep) => {
        const run = {
          callers: 1,
          ms: ctx.options.runMs,
          name: `bench:${scenario}:${c.id}:${rep}`,
          distinct: false,
          section: 'noop' as const,
          warmup: 50,
        };
        if (!redis || c.store !== 'redis') return pool.run(c, run);
        const before = await redis.cpuSeconds();
        const sample = await pool.run(c, run);
        const cycles = (sample.throughput * run.ms) / 1000;
        return { ...sample, redisCpuUsPerCycle: (((await redis.cpuSeconds()) - before) * 1e6) / cycles };
      },
    );
    addRatios(rows);
    return rows;
  } finally {
    await pool.close();
  }
}
