import { READ_WRITE, type PermitContender } from '../contenders/permits.contenders.js';
import type { GrowthTable } from '../support/growth.js';
import { fmt, type BenchContext } from '../support/runner.js';
import { least, PERMIT_SIZE, permitRows, permitTable, SECTION_MS, waitCells, worst } from './s9-semaphore.scenario.js';

/** Each caller's every 10th section is a write: 90 % reads. */
export const WRITE_EVERY = 10;

/**
 * Scenario 10, read-heavy read/write lock: 4 processes × 8 callers (`size`) on one
 * Redis name, 90 % of sections reads (`mode: 'shared'`) and 10 % writes
 * (`mode: 'exclusive'`, a non-atomic read-modify-write of a counter), each
 * pausing `SECTION_MS`; against the same workload with every call exclusive
 * (a plain lock). Sections/s and their ratio, the most readers inside at
 * once, entries that met a holder they must exclude, whether the writers'
 * counter is exact, waits, and how evenly callers were served.
 */
export async function readWrite(
  ctx: BenchContext,
  contenders: readonly PermitContender[] = READ_WRITE,
  size = PERMIT_SIZE,
): Promise<GrowthTable> {
  const variant = `${size.processes} processes × ${size.callers} callers, ${100 - 100 / WRITE_EVERY} % reads, 1 name`;
  const rows = await permitRows(
    ctx,
    { scenario: 's10', variant, workload: 'read-write', writeEvery: WRITE_EVERY, ...size },
    contenders,
  );
  const exclusive = rows.find((r) => r.id === 'ours-redis-exclusive-only' && !r.skipped);
  return permitTable(
    {
      scenario: 's10',
      title: `read-heavy read/write (Redis), ${variant}, sections of ${SECTION_MS} ms; median of ${ctx.options.longRepeats} runs × ${fmt(ctx.options.longRunMs)} ms`,
      columns: [
        'nest-lock (redis)',
        'sections/s',
        'spread',
        '÷ all exclusive',
        'writes',
        'most readers inside',
        'conflicts',
        'writes exact',
        'wait p50 / p99 / max',
        'sections waited p99 / max (× FIFO)',
        'least served',
      ],
      notes: [
        "reads use `mode: 'shared'`, writes `mode: 'exclusive'`; the other row runs the same sections with every call exclusive (a plain lock, with local hand-off between callers of one process)",
        "conflicts: entries that found a writer inside (reads) or any other holder inside (writes), over all runs; writes exact: the writers' non-atomic counter equals the writes in every run",
        'sections waited: sections of other callers that entered between two sections of one caller (strict FIFO with sections of one length: callers − 1); max is the most of any run; least served: the least served caller over the fair share, lowest of any run',
      ],
    },
    rows,
    (r) => [
      r.id === 'ours-redis-exclusive-only' ? 'every call exclusive' : '**shared reads, exclusive writes**',
      fmt(r.median.throughput!),
      `±${((r.spread / 2) * 100).toFixed(0)}%`,
      exclusive ? `${(r.median.throughput! / exclusive.median.throughput!).toFixed(2)}×` : '-',
      fmt(r.median.writes ?? NaN),
      fmt(worst(r, 'maxInside')),
      fmt(r.samples.reduce((n, s) => n + (s.conflicts ?? 0), 0)),
      r.samples.every((s) => s.exact === 1) ? 'yes' : 'NO',
      ...waitCells(r),
      `${least(r, 'leastServed').toFixed(2)}×`,
    ],
  );
}
