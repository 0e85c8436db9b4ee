import { fileURLToPath } from 'node:url';
import type { BenchEnv, Contender } from '../contenders/contender.js';
import { answer, ChildWorker } from '../support/child.js';
import type { Measurement } from '../support/results.js';
import type { CyclesAnswer, CyclesRequest } from './cycles.worker.js';

const workerPath = fileURLToPath(new URL('./cycles.worker.js', import.meta.url));

type Run = Omit<Extract<CyclesRequest, { type: 'run' }>, 'type'>;

/** One child process per contender, created on first use and kept for the scenario's repeats. */
export class CyclesPool {
  private readonly workers = new Map<string, Promise<ChildWorker<CyclesRequest, CyclesAnswer>>>();

  constructor(private readonly env: BenchEnv) {}

  private worker(c: Contender): Promise<ChildWorker<CyclesRequest, CyclesAnswer>> {
    let w = this.workers.get(c.id);
    if (!w) {
      w = (async () => {
        const child = new ChildWorker<CyclesRequest, CyclesAnswer>(workerPath);
        answer(await child.ask({ type: 'prepare', contender: c.id, env: this.env }, 30_000), 'ready');
        return child;
      })();
      this.workers.set(c.id, w);
    }
    return w;
  }

  async run(c: Contender, run: Run): Promise<Measurement> {
    const child = await this.worker(c);
    const r = answer(await child.ask({ type: 'run', ...run }, run.ms + 60_000), 'result');
    return { throughput: r.throughput, p50: r.p50, p99: r.p99, exact: r.exact };
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
