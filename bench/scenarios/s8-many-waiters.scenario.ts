import { oursRedis } from '../contenders/ours.contenders.js';
import { answer, ChildWorker, compiledWorker } from '../support/child.js';
import type { GrowthTable } from '../support/growth.js';
import { fmt, type BenchContext } from '../support/runner.js';
import { quantile, sleep } from '../support/stats.js';
import type { Section, WaiterParentMessage, WaiterWorkerMessage } from './s8-many-waiters.worker.js';

const workerPath = compiledWorker('./s8-many-waiters.worker.js', import.meta.url);

/** Waiting processes (the parent, which holds the lock first, makes a fourth: 2 cores here). */
export const WAITER_PROCESSES = 3;

export interface WaitersOptions {
  sizes: readonly number[];
  /** Sizes above it are capped to it (and the table says so). */
  maxWaiters: number;
}

/** What one run of W waiters gave. */
interface WaitersRun {
  served: number;
  lost: number;
  twice: number;
  overlaps: number;
  errors: number;
  handOffs: number[];
  crossProcess: number[];
  totalMs: number;
  firstError?: string;
}

/** Sorts the sections of all processes by start; a hand-off runs from one section's end to the next one's start. */
export function judge(
  waiters: number,
  firstRelease: number,
  sections: Section[],
): Omit<WaitersRun, 'errors' | 'firstError'> {
  const sorted = [...sections].sort((a, b) => a.start - b.start);
  const seen = new Map<number, number>();
  for (const s of sorted) seen.set(s.id, (seen.get(s.id) ?? 0) + 1);
  const handOffs: number[] = [];
  const crossProcess: number[] = [];
  let overlaps = 0;
  let previous: Section | undefined;
  for (const s of sorted) {
    const from = previous ? previous.end : firstRelease;
    if (s.start < from) overlaps++;
    handOffs.push(s.start - from);
    if (!previous || previous.pid !== s.pid) crossProcess.push(s.start - from);
    previous = s;
  }
  let lost = 0;
  for (let id = 0; id < waiters; id++) if (!seen.has(id)) lost++;
  return {
    served: seen.size,
    lost,
    twice: [...seen.values()].filter((n) => n > 1).length,
    overlaps,
    handOffs,
    crossProcess,
    totalMs: sorted.length ? sorted[sorted.length - 1]!.end - firstRelease : 0,
  };
}

/**
 * Scenario 8, "many waiters": W callers spread over 3 processes wait on one
 * name on Redis (nest-lock with its defaults) while the parent holds it; the
 * parent releases and each waiter runs a short section once. Hand-off time
 * (release or end of a section → start of the next holder's section) p50/p99,
 * over all hand-offs and over those that crossed processes, and whether any
 * waiter was lost or served twice.
 */
export async function manyWaiters(ctx: BenchContext, o: WaitersOptions): Promise<GrowthTable> {
  const table: GrowthTable = {
    scenario: 's8',
    title: `many waiters on one name, Redis, ${WAITER_PROCESSES} waiting processes + the first holder, nest-lock defaults (localHandOff on)`,
    columns: [
      'waiters',
      'hand-off p50',
      'p99',
      'cross-process p50',
      'p99',
      'all served in',
      'lost',
      'served twice',
      'overlaps',
      'errors',
    ],
    rows: [],
    notes: [
      "hand-off: from the end of one section (the first: the holder's release call) to the start of the next section, wall clock across processes",
      'cross-process: the hand-offs whose next holder is in another process than the previous one (the others hand over in-process)',
    ],
  };
  const capped = o.sizes.filter((n) => n > o.maxWaiters);
  if (capped.length)
    table.notes.push(
      `${capped.map((n) => fmt(n)).join(', ')} waiters capped to ${fmt(o.maxWaiters)} on this machine (--max-waiters=N lifts it)`,
    );
  const holder = await oursRedis.create(ctx.env);
  const workers = Array.from(
    { length: WAITER_PROCESSES },
    () => new ChildWorker<WaiterParentMessage, WaiterWorkerMessage>(workerPath),
  );
  try {
    for (const m of await Promise.all(
      workers.map((w) => w.ask({ type: 'prepare', contender: oursRedis.id, env: ctx.env }, 30_000)),
    ))
      answer(m, 'ready');
    for (const size of o.sizes) {
      const waiters = Math.min(size, o.maxWaiters);
      const name = `bench:s8:${waiters}:${Date.now()}`;
      try {
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let entered!: () => void;
        const holding = new Promise<void>((r) => (entered = r));
        let releasedAt = 0;
        const first = holder.withLock(name, async () => {
          entered();
          await held;
          releasedAt = performance.timeOrigin + performance.now();
        });
        await holding;
        const share = (i: number): number =>
          Math.floor(waiters / WAITER_PROCESSES) + (i < waiters % WAITER_PROCESSES ? 1 : 0);
        const firstIds = workers.map((_, i) =>
          Array.from({ length: i }, (_, j) => share(j)).reduce((a, b) => a + b, 0),
        );
        const queued = await Promise.all(
          workers.map((w, i) => w.ask({ type: 'queue', name, callers: share(i), firstId: firstIds[i]! }, 60_000)),
        );
        for (const m of queued) answer(m, 'queued');
        await sleep(100);
        release();
        await first;
        const done = (await Promise.all(workers.map((w) => w.ask({ type: 'collect' }, 300_000)))).map((m) =>
          answer(m, 'sections'),
        );
        const run: WaitersRun = {
          ...judge(
            waiters,
            releasedAt,
            done.flatMap((d) => d.sections),
          ),
          errors: done.reduce((n, d) => n + d.errors, 0),
          firstError: done.find((d) => d.firstError)?.firstError,
        };
        const ms = (v: number): string => `${fmt(v, 2)} ms`;
        ctx.log(
          `  s8 ${waiters} waiters: hand-off p50 ${ms(quantile(run.handOffs, 0.5))}, p99 ${ms(quantile(run.handOffs, 0.99))}, lost ${run.lost}, twice ${run.twice}`,
        );
        if (run.firstError)
          table.notes.push(`${fmt(waiters)} waiters: ${run.errors} calls failed, first: ${run.firstError}`);
        table.rows.push({
          cells: [
            waiters < size ? `${fmt(waiters)} (asked ${fmt(size)})` : fmt(waiters),
            ms(quantile(run.handOffs, 0.5)),
            ms(quantile(run.handOffs, 0.99)),
            ms(quantile(run.crossProcess, 0.5)),
            ms(quantile(run.crossProcess, 0.99)),
            `${fmt(run.totalMs)} ms`,
            fmt(run.lost),
            fmt(run.twice),
            fmt(run.overlaps),
            fmt(run.errors),
          ],
          raw: {
            waiters,
            asked: size,
            handOffP50Ms: quantile(run.handOffs, 0.5),
            handOffP99Ms: quantile(run.handOffs, 0.99),
            crossProcessHandOffs: run.crossProcess.length,
            crossProcessP50Ms: quantile(run.crossProcess, 0.5),
            crossProcessP99Ms: quantile(run.crossProcess, 0.99),
            totalMs: run.totalMs,
            served: run.served,
            lost: run.lost,
            servedTwice: run.twice,
            overlaps: run.overlaps,
            errors: run.errors,
          },
        });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        ctx.log(`  s8 ${waiters} waiters: FAILED ${message}`);
        table.rows.push({
          cells: [fmt(waiters), 'failed', '-', '-', '-', '-', '-', '-', '-', '-'],
          raw: { waiters, failed: message },
        });
      }
    }
  } finally {
    for (const m of await Promise.all(workers.map((w) => w.ask({ type: 'close' }, 15_000)))) {
      if (m.type !== 'closed') ctx.log(`  s8: closing a worker failed: ${'message' in m ? m.message : m.type}`);
    }
    await Promise.all(workers.map((w) => w.stop()));
    await holder.close();
  }
  return table;
}
