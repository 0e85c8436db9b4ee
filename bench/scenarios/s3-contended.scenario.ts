import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Contender } from '../contenders/contender.js';
import type { BenchRedis } from '../support/redis-server.js';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext } from '../support/runner.js';
import type { ParentMessage, WorkerMessage } from './s3-contended.worker.js';

export const PROCESSES = 4;
export const CALLERS_PER_PROCESS = 4;
/** Redis commands of the section itself (GET + SET of the counter), not counted as lock commands. */
const SECTION_COMMANDS = 2;

const workerPath = fileURLToPath(new URL('./s3-contended.worker.js', import.meta.url));

/** One child process, with a typed request/answer over IPC. */
class Worker {
  private readonly child: ChildProcess;
  private readonly pending: Array<(m: WorkerMessage) => void> = [];
  private exited = false;

  constructor() {
    this.child = fork(workerPath, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: WorkerMessage) => this.pending.shift()?.(m));
    this.child.on('exit', () => {
      this.exited = true;
      for (const resolve of this.pending.splice(0)) resolve({ type: 'failed', message: 'worker exited' });
    });
  }

  ask(message: ParentMessage, timeoutMs: number): Promise<WorkerMessage> {
    if (this.exited) return Promise.resolve({ type: 'failed', message: 'worker exited' });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.splice(this.pending.indexOf(answer), 1);
        resolve({ type: 'failed', message: `no answer to "${message.type}" within ${timeoutMs} ms` });
      }, timeoutMs);
      const answer = (m: WorkerMessage): void => {
        clearTimeout(timer);
        resolve(m);
      };
      this.pending.push(answer);
      this.child.send(message);
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'exit' } satisfies ParentMessage);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

function expect<T extends WorkerMessage['type']>(m: WorkerMessage, type: T): Extract<WorkerMessage, { type: T }> {
  if (m.type !== type) throw new Error(m.type === 'failed' ? m.message : `unexpected answer "${m.type}"`);
  return m as Extract<WorkerMessage, { type: T }>;
}

/**
 * Scenario 3 (and 6b for PostgreSQL): 4 processes × 4 callers on one name;
 * each section reads a Redis counter and writes it back plus one, which only
 * comes out exact if no two sections overlap. Sections/s, lock commands per
 * section (INFO stats of the bench's own Redis, minus the section's GET and
 * SET), the longest wait against strict FIFO, and whether the counter is exact.
 */
export async function contended(ctx: BenchContext, redis: BenchRedis, scenario: string, contenders: readonly Contender[]): Promise<Row[]> {
  const durationMs = ctx.options.longRunMs;
  const workers = Array.from({ length: PROCESSES }, () => new Worker());
  const callers = PROCESSES * CALLERS_PER_PROCESS;
  try {
    const rows = await interleave(ctx, scenario, `${PROCESSES} processes × ${CALLERS_PER_PROCESS} callers, 1 name`, 'sections/s', contenders, ctx.options.longRepeats, async (c, rep) => {
      const name = `bench:${scenario}:${c.id}:${rep}`;
      const counterKey = `bench:${scenario}:counter:${c.id}:${rep}`;
      try {
        const prepare: ParentMessage = { type: 'prepare', contender: c.id, env: ctx.env, counterUrl: redis.url, name, counterKey, callers: CALLERS_PER_PROCESS };
        for (const m of await Promise.all(workers.map((w) => w.ask(prepare, 30_000)))) expect(m, 'ready');
        await redis.admin.set(counterKey, '0');
        const before = await redis.commandsProcessed();
        // A give-up of a peer at default settings can take a few seconds past the deadline.
        const done = (await Promise.all(workers.map((w) => w.ask({ type: 'go', durationMs }, durationMs + 60_000)))).map((m) => expect(m, 'done'));
        const after = await redis.commandsProcessed();
        const counter = Number(await redis.admin.get(counterKey));
        const sections = done.reduce((n, d) => n + d.sections, 0);
        const errors = done.reduce((n, d) => n + d.errors, 0);
        const elapsedMs = Math.max(...done.map((d) => d.elapsedMs));
        const maxWaitMs = Math.max(...done.map((d) => d.maxWaitMs));
        // Strict FIFO: a caller waits for the sections of the other callers, each lasting the mean section period.
        const fifoWaitMs = ((callers - 1) * elapsedMs) / Math.max(1, sections);
        const commands = after - before - 1; // the second INFO counts itself
        const firstError = done.find((d) => d.firstError)?.firstError;
        if (sections === 0) throw new Error(`no section completed${firstError ? `: ${firstError}` : ''}`);
        return {
          throughput: (sections * 1000) / elapsedMs,
          sections,
          errors,
          lockCommandsPerSection: c.store === 'redis' ? (commands - SECTION_COMMANDS * sections) / sections : NaN,
          maxWaitMs,
          fifoWaitMs,
          waitVsFifo: maxWaitMs / fifoWaitMs,
          exact: counter === sections ? 1 : 0,
          lostUpdates: sections - counter,
        };
      } finally {
        for (const m of await Promise.all(workers.map((w) => w.ask({ type: 'close' }, 15_000)))) {
          if (m.type === 'failed') ctx.log(`  ${scenario} ${c.id}: closing a worker failed: ${m.message}`);
        }
        await redis.admin.del(counterKey);
      }
    });
    addRatios(rows, true);
    for (const r of rows) {
      if (r.skipped) continue;
      const inexact = r.samples.filter((s) => s.exact !== 1).length;
      if (inexact > 0) r.notes.push(`counter INEXACT in ${inexact}/${r.samples.length} runs (sections overlapped; ${r.samples.map((s) => s.lostUpdates).join(', ')} lost updates)`);
      const errors = r.samples.reduce((n, s) => n + (s.errors ?? 0), 0);
      if (errors > 0) r.notes.push(`${errors} acquisitions gave up (retries exhausted) and were retried by the caller`);
    }
    return rows;
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}
