import type { BenchEnv, Contender } from '../contenders/contender.js';
import { answer, ChildWorker, compiledWorker } from '../support/child.js';
import type { Measurement } from '../support/results.js';
import type { CyclesAnswer, CyclesRequest } from './cycles.worker.js';

const workerPath = compiledWorker('./cycles.worker.js', import.meta.url);
const hideOpenTelemetry = compiledWorker('../support/hide-opentelemetry.cjs', import.meta.url);

type Run = Omit<Extract<CyclesRequest, { type: 'run' }>, 'type'>;

/** One child process per contender, created on first use and kept for the scenario's repeats. */
export class CyclesPool {
  private readonly workers = new Map<string, Promise<ChildWorker<CyclesRequest, CyclesAnswer>>>();

  constructor(private readonly env: BenchEnv) {}

  private worker(c: Contender): Promise<ChildWorker<CyclesRequest, CyclesAnswer>> {
    let w = this.workers.get(c.id);
    if (!w) {
      w = (async () => {
        const hidden = c.openTelemetryApi === 'hidden';
        const child = new ChildWorker<CyclesRequest, CyclesAnswer>(
          workerPath,
          hidden ? [...process.execArgv, '--require', hideOpenTelemetry] : process.execArgv,
        );
        const ready = answer(await child.ask({ type: 'prepare', contender: c.id, env: this.env }, 30_000), 'ready');
        if (c.openTelemetryApi !== undefined && ready.openTelemetryApi !== !hidden) {
          await child.stop();
          throw new Error(
            `${c.id}: @opentelemetry/api should be ${c.openTelemetryApi} in its process, but it is ${ready.openTelemetryApi ? 'loaded' : 'not loaded'}`,
          );
        }
        return child;
      })();
      this.workers.set(c.id, w);
    }
    return w;
  }

  async run(c: Contender, run: Run): Promise<Measurement> {
    const child = await this.worker(c);
    const r = answer(await child.ask({ type: 'run', ...run }, run.ms + 60_000), 'result');
    return { throughput: r.throughput, p50: r.p50, p99: r.p99, exact: r.exact, cpuUsPerCycle: r.cpuUsPerCycle };
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.workers.values()].map(async (w) => {
        const child = await w.catch(() => undefined);
        if (!child) return;
        await child.ask({ type: 'close' }, 15_000);
        await child.stop();
      }),
    );
    this.workers.clear();
  }
}
