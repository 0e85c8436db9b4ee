import { Redis } from 'ioredis';
import {
  noPermitCeiling,
  permitRoundTripFloor,
  SEMAPHORE,
  type PermitContender,
} from '../contenders/permits.contenders.js';
import { answer, ChildWorker, compiledWorker } from '../support/child.js';
import type { GrowthTable } from '../support/growth.js';
import type { Row } from '../support/results.js';
import { fmt, interleave, type BenchContext } from '../support/runner.js';
import { quantile } from '../support/stats.js';
import type { PermitParentMessage, PermitWorkerMessage } from './s9-semaphore.worker.js';

const workerPath = compiledWorker('./s9-semaphore.worker.js', import.meta.url);

/** Processes and callers per process of scenarios 9 and 10 (the smoke spec runs them smaller). */
export interface PermitSize {
  processes: number;
  callers: number;
}
export const PERMIT_SIZE: PermitSize = { processes: 4, callers: 8 };
/** The pause inside every section of scenarios 9 and 10, in ms: the guarded work (a call to a service that takes 4 at a time, a read). */
export const SECTION_MS = 2;
/** Scenario 9's permits. */
export const SEMAPHORE_LIMIT = 4;

/** What one run of scenario 9 or 10 asks of each worker. */
export interface PermitRun extends PermitSize {
  scenario: string;
  variant: string;
  workload: 'semaphore' | 'read-write';
  limit?: number;
  writeEvery?: number;
}

/**
 * Runs `contenders` on one Redis name from `run.processes` processes ×
 * `run.callers` callers, interleaved repeats of `longRunMs` (see
 * s9-semaphore.worker.ts for the sections and their checks); a `reference`
 * contender runs `limit` callers in the first process only. Per run:
 * sections/s, the most holders (or readers) inside at once, entries that
 * found a holder they must exclude, waits in ms and in sections of others,
 * how evenly the callers were served, give-ups, and (read/write) whether the
 * writers' counter is exact.
 */
export async function permitRows(
  ctx: BenchContext,
  run: PermitRun,
  contenders: readonly PermitContender[],
): Promise<Row[]> {
  const durationMs = ctx.options.longRunMs;
  const workers = Array.from(
    { length: run.processes },
    () => new ChildWorker<PermitParentMessage, PermitWorkerMessage>(workerPath),
  );
  const admin = new Redis(ctx.env.redisUrl, { lazyConnect: true });
  await admin.connect();
  try {
    return await interleave(
      ctx,
      run.scenario,
      run.variant,
      'sections/s',
      contenders,
      ctx.options.longRepeats,
      async (c, rep) => {
        const name = `bench:${run.scenario}:${c.id}:${rep}`;
        const counters = `bench:${run.scenario}:counters:${c.id}:${rep}`;
        try {
          const callersOf = (i: number): number => {
            if (c.kind !== 'reference') return run.callers;
            const limit = run.limit ?? 1;
            // The spread reference: the limit's callers dealt out over the processes, one each while they last.
            if (c.spread) return Math.floor(limit / run.processes) + (i < limit % run.processes ? 1 : 0);
            return i === 0 ? limit : 0;
          };
          const prepare = (i: number): PermitParentMessage => ({
            type: 'prepare',
            contender: c.id,
            env: ctx.env,
            name,
            counters,
            callers: callersOf(i),
            workload: run.workload,
            sectionMs: SECTION_MS,
            limit: run.limit,
            writeEvery: run.writeEvery,
          });
          for (const m of await Promise.all(workers.map((w, i) => w.ask(prepare(i), 30_000)))) answer(m, 'ready');
          const warmupMs = Math.min(500, durationMs);
          for (const m of await Promise.all(
            workers.map((w) => w.ask({ type: 'go', durationMs: warmupMs, warmup: true }, warmupMs + 60_000)),
          ))
            answer(m, 'done');
          const redisCpuBefore = await redisCpuUs(admin);
          // A peer's give-up at default settings can take 10 s past the deadline.
          const done = (
            await Promise.all(workers.map((w) => w.ask({ type: 'go', durationMs }, durationMs + 60_000)))
          ).map((m) => answer(m, 'done'));
          const redisCpu = (await redisCpuUs(admin)) - redisCpuBefore;
          const sections = done.reduce((n, d) => n + d.sections, 0);
          const writes = done.reduce((n, d) => n + d.writes, 0);
          const firstError = done.find((d) => d.firstError)?.firstError;
          if (sections === 0) throw new Error(`no section completed${firstError ? `: ${firstError}` : ''}`);
          const elapsedMs = Math.max(...done.map((d) => d.elapsedMs));
          const callers = done.reduce((n, d) => n + d.perCaller.length, 0);
          const perCaller = done.flatMap((d) => d.perCaller);
          const waits = done.flatMap((d) => d.waits);
          const between = done.flatMap((d) => d.between);
          const maxBetween = Math.max(...done.map((d) => d.maxBetween));
          const written = Number((await admin.get(`${counters}:written`)) ?? 0);
          return {
            throughput: (sections * 1000) / elapsedMs,
            sections,
            writes,
            errors: done.reduce((n, d) => n + d.errors, 0),
            maxInside: Math.max(...done.map((d) => d.maxInside)),
            conflicts: done.reduce((n, d) => n + d.conflicts, 0),
            exact: written === writes ? 1 : 0,
            p50WaitMs: quantile(waits, 0.5),
            p99WaitMs: quantile(waits, 0.99),
            maxWaitMs: Math.max(...done.map((d) => d.maxWaitMs)),
            /** Under strict FIFO with sections of one length, a looping caller waits for each other caller's section once: callers − 1. */
            fifoSections: callers - 1,
            p99SectionsWaited: quantile(between, 0.99),
            maxSectionsWaited: maxBetween,
            sectionsWaitedVsFifo: maxBetween / Math.max(1, callers - 1),
            /** CPU per section of all the worker processes together, and of the redis-server (INFO cpu), in µs. */
            clientCpuUsPerSection: done.reduce((n, d) => n + d.cpuUs, 0) / sections,
            redisCpuUsPerSection: redisCpu / sections,
            /** Sections of the least and the most served caller, over the fair share (sections / callers): 0 is a starved caller. */
            leastServed: (Math.min(...perCaller) * callers) / sections,
            mostServed: (Math.max(...perCaller) * callers) / sections,
          };
        } finally {
          for (const m of await Promise.all(workers.map((w) => w.ask({ type: 'close' }, 15_000)))) {
            if (m.type !== 'closed')
              ctx.log(`  ${run.scenario} ${c.id}: closing a worker failed: ${'message' in m ? m.message : m.type}`);
          }
          const keys = await admin.keys(`${counters}*`);
          if (keys.length) await admin.del(...keys);
        }
      },
    );
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await admin.quit();
  }
}

/** The redis-server's CPU time so far (INFO cpu: user and system, main and background threads), in µs. */
async function redisCpuUs(admin: Redis): Promise<number> {
  const info = await admin.info('cpu');
  const seconds = (field: string): number => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1e6;
}

const ms = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? '-' : v < 10 ? v.toFixed(2) : v.toFixed(0);
const mark = (met: boolean): string => (met ? 'met' : 'not met');
const times = (v: number | undefined, digits = 2): string =>
  v === undefined || Number.isNaN(v) ? '-' : `${v.toFixed(digits)}×`;
const spreadOf = (r: Row): string => `±${((r.spread / 2) * 100).toFixed(0)}%`;
/** The most of any run (checks are made on the worst run, not the median). */
export const worst = (r: Row, key: string): number => Math.max(...r.samples.map((s) => s[key] ?? NaN));
export const least = (r: Row, key: string): number => Math.min(...r.samples.map((s) => s[key] ?? NaN));

/** Waits of a row: ms p50/p99/max (medians over runs) and sections of others p99 / max (the most of any run) against strict FIFO. */
export function waitCells(r: Row): string[] {
  const m = r.median;
  return [
    `${ms(m.p50WaitMs)} / ${ms(m.p99WaitMs)} / ${ms(m.maxWaitMs)} ms`,
    `${fmt(m.p99SectionsWaited ?? NaN)} / ${fmt(worst(r, 'maxSectionsWaited'))} (${times(worst(r, 'sectionsWaitedVsFifo'))} of ${fmt(m.fifoSections ?? NaN)})`,
  ];
}

/** Rows as a table's cells: the skipped ones say why. */
export function permitTable(base: Omit<GrowthTable, 'rows'>, rows: Row[], cells: (r: Row) => string[]): GrowthTable {
  return {
    ...base,
    rows: rows.map((r): GrowthTable['rows'][number] =>
      r.skipped
        ? {
            cells: base.columns.map((_, i) => (i === 0 ? r.label : i === 1 ? `skipped: ${r.skipped}` : '-')),
            raw: { id: r.id, skipped: r.skipped },
          }
        : { cells: cells(r), raw: { id: r.id, spread: r.spread, min: r.min, max: r.max, ...r.median } },
    ),
  };
}

/**
 * Scenario 9, semaphore: 4 processes × 8 callers (`size`) share a semaphore of 4
 * permits on one Redis name; each section pauses `SECTION_MS`. nest-lock
 * (`limit: 4`) against redis-semaphore's `Semaphore` at its defaults and
 * with a 1 ms poll, and the ceiling of 4 callers with no lock.
 */
export async function semaphore(
  ctx: BenchContext,
  contenders: readonly PermitContender[] = SEMAPHORE,
  size = PERMIT_SIZE,
): Promise<GrowthTable> {
  const variant = `${size.processes} processes × ${size.callers} callers, limit ${SEMAPHORE_LIMIT}, 1 name`;
  const rows = await permitRows(
    ctx,
    { scenario: 's9', variant, workload: 'semaphore', limit: SEMAPHORE_LIMIT, ...size },
    contenders,
  );
  const ours = rows.find((r) => r.kind === 'ours' && !r.skipped);
  const ceiling = rows.find((r) => r.id === noPermitCeiling.id && !r.skipped)?.median.throughput;
  const floor = rows.find((r) => r.id === permitRoundTripFloor.id && !r.skipped)?.median.throughput;
  const defaults = rows.find((r) => r.kind === 'peer' && r.retry === 'default' && !r.skipped)?.median.throughput;
  const bounds =
    ceiling && defaults
      ? [
          `× ceiling: sections/s over the ceiling row's (${fmt(ceiling)}/s: ${SEMAPHORE_LIMIT} callers running the section back to back with no lock, which no semaphore of ` +
            `${SEMAPHORE_LIMIT} permits can pass); 1.5× redis-semaphore at its defaults would be ${times(1.5 * (defaults / ceiling))} the ceiling in this run`,
        ]
      : [];
  if (ceiling && floor)
    bounds.push(
      `round trip a section: ${SEMAPHORE_LIMIT} callers with no lock, one per process, each section followed by one PING: ${times(floor / ceiling)} the ceiling, ` +
        `the most a semaphore that asks the store once per grant (a fencing token and the new owner) could reach here` +
        (ours ? `; nest-lock ran at ${times(ours.median.throughput! / floor)} of it` : ''),
    );
  if (ours && ceiling)
    bounds.push(
      `checks: ≥ 0.85× the ceiling: ${mark(ours.median.throughput! / ceiling >= 0.85)} (${times(ours.median.throughput! / ceiling)}); ` +
        `longest wait ≤ 2× strict FIFO: ${mark(worst(ours, 'sectionsWaitedVsFifo') <= 2)} (${times(worst(ours, 'sectionsWaitedVsFifo'))}); ` +
        `least served ≥ 0.9× its share: ${mark(least(ours, 'leastServed') >= 0.9)} (${times(least(ours, 'leastServed'))})`,
    );
  return permitTable(
    {
      scenario: 's9',
      title: `semaphore (Redis), ${variant}, sections of ${SECTION_MS} ms; median of ${ctx.options.longRepeats} runs × ${fmt(ctx.options.longRunMs)} ms`,
      columns: [
        'contender',
        'retry',
        'sections/s',
        'spread',
        '× ceiling',
        'ours ÷ this',
        'most inside',
        'wait p50 / p99 / max',
        'sections waited p99 / max (× FIFO)',
        'least / most served',
        'give-ups',
        'CPU µs / section: clients, Redis',
      ],
      notes: [
        'most inside: the most holders seen at once by `INCR` on entry, over all runs (never above the limit if the semaphore holds)',
        "CPU µs / section: the worker processes' CPU time (user and system, all processes together) and the redis-server's (INFO cpu) during a run, per section (medians): what the section and the lock cost the 2 cores they share, which moves less with the machine than sections/s does",
        `sections waited: sections of other callers that entered between two sections of one caller (strict FIFO with sections of one length: callers − 1 = ${size.processes * size.callers - 1}); max is the most of any run`,
        'least / most served: sections of the least and the most served caller over the fair share, the lowest and highest of any run (0: a starved caller)',
        'give-ups: acquisitions that gave up (redis-semaphore throws after acquireTimeout) and were asked again; their wait counts from the first request',
        ...bounds,
      ],
    },
    rows,
    (r) => [
      r.kind === 'ours' ? `**${r.label}**` : r.label,
      r.retry,
      fmt(r.median.throughput!),
      spreadOf(r),
      ceiling ? times(r.median.throughput! / ceiling) : '-',
      ours && r !== ours ? times(ours.median.throughput! / r.median.throughput!) : '-',
      fmt(worst(r, 'maxInside')),
      ...waitCells(r),
      `${times(least(r, 'leastServed'))} / ${times(worst(r, 'mostServed'))}`,
      fmt(r.samples.reduce((n, s) => n + (s.errors ?? 0), 0)),
      `${fmt(r.median.clientCpuUsPerSection ?? NaN)} / ${fmt(r.median.redisCpuUsPerSection ?? NaN)}`,
    ],
  );
}
