/**
 * A child process that hosts one contender for scenarios 1, 2, 4 and 6a, so
 * that what one library does to the process (AsyncLocalStorage turning on
 * promise hooks, timers, GC pressure) does not slow down the next one.
 * Driven by cycles.pool.ts: prepare → ready, run → result, close → closed.
 */
import { createRequire } from 'node:module';
import { contenderById, type BenchEnv, type LockClient } from '../contenders/index.js';
import { serveParent } from '../support/child.js';
import { measureCycles } from '../support/loops.js';

export type CyclesRequest =
  | { type: 'prepare'; contender: string; env: BenchEnv }
  | {
      type: 'run';
      /** Concurrent callers. */
      callers: number;
      ms: number;
      /** Lock name; with `distinct`, each caller appends its index. */
      name: string;
      distinct: boolean;
      /** `noop`: an empty section; `counter`: a non-atomic read-modify-write of a local counter that must come out exact. */
      section: 'noop' | 'counter';
      /** Cycles per caller before the measured window. */
      warmup: number;
    }
  | { type: 'close' }
  | { type: 'exit' };

export type CyclesAnswer =
  /** `openTelemetryApi`: whether `@opentelemetry/api` is loaded in this process once the contender was created. */
  | { type: 'ready'; openTelemetryApi: boolean }
  /** `cpuUsPerCycle`: this process's CPU time (user + system, all threads) over the measured window, per cycle. */
  | { type: 'result'; throughput: number; p50: number; p99: number; exact: number; cpuUsPerCycle: number }
  | { type: 'closed' };

let client: LockClient | undefined;

serveParent<CyclesRequest>({
  async prepare(m) {
    client = await contenderById(m.contender).create(m.env);
    const loaded = Object.keys(createRequire(import.meta.url).cache).some((path) =>
      path.includes('/node_modules/@opentelemetry/api/'),
    );
    return { type: 'ready', openTelemetryApi: loaded } satisfies CyclesAnswer;
  },
  async run(m) {
    const lock = client!;
    let counter = 0;
    const section =
      m.section === 'noop'
        ? async (): Promise<void> => {}
        : async (): Promise<void> => {
            const seen = counter;
            await Promise.resolve();
            counter = seen + 1;
          };
    const name = m.distinct ? (caller: number): string => `${m.name}:${caller}` : (): string => m.name;
    await Promise.all(
      Array.from({ length: m.callers }, async (_, caller) => {
        for (let i = 0; i < m.warmup; i++) await lock.withLock(name(caller), section);
      }),
    );
    counter = 0;
    const cpu = process.cpuUsage();
    const r = await measureCycles(lock, m.callers, m.ms, name, section);
    const used = process.cpuUsage(cpu);
    const exact = m.section === 'noop' || counter === r.cycles ? 1 : 0;
    return {
      type: 'result',
      throughput: r.throughput,
      p50: r.p50,
      p99: r.p99,
      exact,
      cpuUsPerCycle: (used.user + used.system) / r.cycles,
    } satisfies CyclesAnswer;
  },
  async close() {
    await client?.close();
    client = undefined;
    return { type: 'closed' } satisfies CyclesAnswer;
  },
});
