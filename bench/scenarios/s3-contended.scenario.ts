import { fileURLToPath } from 'node:url';
import type { Contender } from '../contenders/contender.js';
import { answer, ChildWorker } from '../support/child.js';
import type { BenchRedis } from '../support/redis-server.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';
import { quantile } from '../support/stats.js';
import type { ParentMessage, WorkerMessage } from './s3-contended.worker.js';
import { floorBound, handOffFloorUs } from './s3-floor.js';

/** `cmd:<name>` → calls per section, from two `INFO commandstats` snapshots (the INFO calls themselves left out). */
function perSection(before: Map<string, number>, after: Map<string, number>, sections: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, calls] of after) {
    const delta = calls - (before.get(name) ?? 0) - (name === 'info' ? 3 : 0);
    if (delta > 0) out[`cmd:${name}`] = delta / sections;
  }
  return out;
}

export const PROCESSES = 4;
export const CALLERS_PER_PROCESS = 4;
/** Redis commands of the section itself (GET + SET of the counter), not counted as lock commands. */
const SECTION_COMMANDS = 2;

const workerPath = fileURLToPath(new URL('./s3-contended.worker.js', import.meta.url));

/**
 * Scenario 3 (and 6b for PostgreSQL): 4 processes × 4 callers on one name;
 * each section reads a Redis counter and writes it back plus one, which only
 * comes out exact if no two sections overlap. Sections/s, lock commands per
 * section (INFO stats of the bench's own Redis, minus the section's GET and
 * SET), the longest wait against strict FIFO, and whether the counter is exact.
 */
export async function contended(
  ctx: BenchContext,
  redis: BenchRedis,
  scenario: string,
  contenders: readonly Contender[],
): Promise<Row[]> {
  const durationMs = ctx.options.longRunMs;
  const workers = Array.from({ length: PROCESSES }, () => new ChildWorker<ParentMessage, WorkerMessage>(workerPath));
  const callers = PROCESSES * CALLERS_PER_PROCESS;
  /** The first give-up's message of each contender, for its note. */
  const gaveUp = new Map<string, string>();
  try {
    const rows = await interleave(
      ctx,
      scenario,
      `${PROCESSES} processes × ${CALLERS_PER_PROCESS} callers, 1 name`,
      'sections/s',
      contenders,
      ctx.options.longRepeats,
      async (c, rep) => {
        const name = `bench:${scenario}:${c.id}:${rep}`;
        const counterKey = `bench:${scenario}:counter:${c.id}:${rep}`;
        try {
          // The no-lock ceiling runs one caller in the first process only: its sections must not overlap either.
          const prepare = (i: number): ParentMessage => ({
            type: 'prepare',
            contender: c.id,
            env: ctx.env,
            counterUrl: redis.url,
            name,
            counterKey,
            callers: c.kind === 'reference' ? (i === 0 ? 1 : 0) : CALLERS_PER_PROCESS,
          });
          for (const m of await Promise.all(workers.map((w, i) => w.ask(prepare(i), 180_000)))) answer(m, 'ready');
          // Unmeasured warm-up round, under MONITOR: how many of the commands are round trips from the clients.
          const warmupMs = Math.min(500, durationMs);
          const warm = await redis.countCommands(() =>
            Promise.all(
              workers.map((w) => w.ask({ type: 'go', durationMs: warmupMs, warmup: true }, warmupMs + 60_000)),
            ),
          );
          const warmSections = warm.result.map((m) => answer(m, 'done')).reduce((n, d) => n + d.sections, 0);
          const roundTripsPerSection =
            warmSections > 0 ? (warm.client - SECTION_COMMANDS * warmSections) / warmSections : NaN;
          await redis.admin.del(counterKey);
          const statsBefore = await redis.commandStats();
          const before = await redis.commandsProcessed();
          // A give-up of a peer at default settings can take a few seconds past the deadline.
          const done = (
            await Promise.all(workers.map((w) => w.ask({ type: 'go', durationMs }, durationMs + 60_000)))
          ).map((m) => answer(m, 'done'));
          const after = await redis.commandsProcessed();
          const statsAfter = await redis.commandStats();
          const counter = Number((await redis.admin.get(counterKey))?.split(' ')[0] ?? NaN);
          const sections = done.reduce((n, d) => n + d.sections, 0);
          const errors = done.reduce((n, d) => n + d.errors, 0);
          const elapsedMs = Math.max(...done.map((d) => d.elapsedMs));
          const maxWaitMs = Math.max(...done.map((d) => d.maxWaitMs));
          // Strict FIFO: a caller waits for the sections of the other callers, each lasting the mean section period.
          const fifoWaitMs = ((callers - 1) * elapsedMs) / Math.max(1, sections);
          const commands = after - before - 1; // the second INFO counts itself
          const firstError = done.find((d) => d.firstError)?.firstError;
          const waits = done.flatMap((d) => d.waits);
          const between = done.flatMap((d) => d.between);
          const maxBetween = Math.max(...done.map((d) => d.maxBetween));
          const switches = done.reduce((n, d) => n + d.switches, 0);
          const busiest = Math.max(...done.flatMap((d) => d.perCaller));
          if (sections === 0) throw new Error(`no section completed${firstError ? `: ${firstError}` : ''}`);
          if (firstError !== undefined && !gaveUp.has(c.id)) gaveUp.set(c.id, firstError);
          return {
            throughput: (sections * 1000) / elapsedMs,
            sections,
            errors,
            lockCommandsPerSection: c.store === 'redis' ? (commands - SECTION_COMMANDS * sections) / sections : NaN,
            roundTripsPerSection: c.store === 'redis' ? roundTripsPerSection : NaN,
            maxWaitMs,
            fifoWaitMs,
            waitVsFifo: maxWaitMs / fifoWaitMs,
            p50WaitMs: quantile(waits, 0.5),
            p99WaitMs: quantile(waits, 0.99),
            /** The most sections of other callers that ran while one caller waited (strict FIFO: callers − 1). */
            maxSectionsWaited: maxBetween,
            p99SectionsWaited: quantile(between, 0.99),
            sectionsWaitedVsFifo: maxBetween / (callers - 1),
            ...(c.store === 'redis' ? perSection(statsBefore, statsAfter, sections) : {}),
            exact: counter === sections ? 1 : 0,
            /** Share of sections whose previous section was another caller's: near 1 for a fair lock, low when one caller barges back in. */
            handOverShare: switches / sections,
            /** Sections/s that followed another caller's section: how fast the lock actually moves between callers. */
            handOversPerSecond: (switches * 1000) / elapsedMs,
            /** Share of all sections done by the busiest of the 16 callers: 1/16 for a fair lock. */
            busiestCallerShare: busiest / sections,
            lostUpdates: sections - counter,
          };
        } finally {
          for (const m of await Promise.all(workers.map((w) => w.ask({ type: 'close' }, 15_000)))) {
            if (m.type !== 'closed')
              ctx.log(`  ${scenario} ${c.id}: closing a worker failed: ${'message' in m ? m.message : m.type}`);
          }
          await redis.admin.del(counterKey, `${counterKey}:warmup`);
        }
      },
    );
    addRatios(rows, true);
    const ceiling = rows.find((r) => r.kind === 'reference' && !r.skipped);
    if (ceiling) {
      for (const r of rows)
        if (!r.skipped && r !== ceiling) r.vsCeiling = r.median.throughput! / ceiling.median.throughput!;
      const perSecond = ceiling.median.throughput!;
      ceiling.notes.push(
        `the section alone, with no lock and no waiting, runs ${Math.round(perSecond).toLocaleString('en-US')} sections/s here: ` +
          'no mutual exclusion of this section can go faster, so "× ceiling" is how close a lock comes to the limit',
      );
      const store = contenders.find((c) => c.kind === 'ours')?.store;
      if (store === 'redis' || store === 'postgres') {
        // What the machine charges for telling another process, whatever the lock computes: measured in this run.
        const floorUs = await handOffFloorUs(store === 'redis' ? redis.url : ctx.env.pgUrl, store);
        ceiling.median.handOffFloorUs = floorUs;
        const turn = CALLERS_PER_PROCESS;
        // Round-robin turns of t sections: the longest wait is 3t + 3 sections of others (t = 4: 15, strict FIFO; t = 6: 21 ≤ 1.5 × 15).
        const longest = 6;
        const w =
          store === 'redis'
            ? {
                notice: 'a PUBLISH sent',
                store: 'Redis',
                listener: 'subscriber',
                why: '; mostly the wake-up of idle processes',
              }
            : { notice: 'a NOTIFY committed', store: 'PostgreSQL', listener: 'LISTENing', why: '' };
        ceiling.notes.push(
          `hand-off floor: ${w.notice} by a process that has just had a ${w.store} reply reaches an idle ${w.listener} process ${Math.round(floorUs)} µs later ` +
            `(median of this run${w.why}). A lock whose hand-offs between processes go through ${w.store} pays at least that per hand-off: ` +
            `with turns of ${turn} sections per process (strict FIFO, ${turn} callers each) it cannot pass ${floorBound(perSecond, floorUs, turn).toFixed(2)}× the ceiling, ` +
            `with turns of ${longest} (the most that keeps every wait within 1.5× strict FIFO, and what this library's turns come to here) ${floorBound(perSecond, floorUs, longest).toFixed(2)}×, ` +
            'even if its own work cost nothing; hand-overs between callers of one process cost no round trip',
        );
      }
    }
    for (const r of rows) {
      if (r.skipped) continue;
      const inexact = r.samples.filter((s) => s.exact !== 1).length;
      if (inexact > 0)
        r.notes.push(
          `counter INEXACT in ${inexact}/${r.samples.length} runs (sections overlapped; ${r.samples.map((s) => s.lostUpdates).join(', ')} lost updates)`,
        );
      const errors = r.samples.reduce((n, s) => n + (s.errors ?? 0), 0);
      const breakdown = Object.entries(r.median)
        .filter(([k, v]) => k.startsWith('cmd:') && v >= 0.05)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k.slice(4)} ${v.toFixed(1)}`);
      if (breakdown.length && r.kind !== 'peer')
        r.notes.push(
          `Redis commands per section (incl. the section's get + set, and calls inside scripts): ${breakdown.join(', ')}`,
        );
      if (errors > 0)
        r.notes.push(
          `${errors} acquisitions gave up and were retried by the caller; the first: ${gaveUp.get(r.id) ?? '?'}`,
        );
    }
    return rows;
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}
