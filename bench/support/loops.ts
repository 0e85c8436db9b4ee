import { Latencies, now } from './stats.js';

/** Upper bound on cycles of one caller in one run, whatever the duration. */
export const MAX_CYCLES_PER_CALLER = 1_000_000;

export interface LoopResult {
  cycles: number;
  errors: number;
  elapsedMs: number;
  latencies: Latencies;
  firstError?: string;
}

/**
 * `callers` concurrent loops, each running `cycle(callerIndex)` until `ms`
 * have passed (or the cycle cap is reached); a cycle that throws counts as an
 * error. Resolves when every loop has finished its last cycle.
 */
export async function timedLoops(
  callers: number,
  ms: number,
  cycle: (caller: number) => Promise<unknown>,
): Promise<LoopResult> {
  const latencies = new Latencies();
  let cycles = 0;
  let errors = 0;
  let firstError: string | undefined;
  const started = now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; i < MAX_CYCLES_PER_CALLER && now() < deadline; i++) {
        const t = now();
        try {
          await cycle(caller);
          latencies.add(now() - t);
          cycles++;
        } catch (err) {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }
      }
    }),
  );
  return { cycles, errors, elapsedMs: now() - started, latencies, firstError };
}

/** Rejects when `promise` takes longer than `ms` (the work itself is not cancelled). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `callers` loops of `client.withLock(name(caller), fn)` for `ms`: throughput
 * in cycles/s and the p50/p99 of one cycle. Any failed cycle fails the run.
 */
export async function measureCycles(
  client: { withLock(name: string, fn: () => Promise<void>): Promise<void> },
  callers: number,
  ms: number,
  name: (caller: number) => string,
  fn: () => Promise<void> = async () => {},
): Promise<{ throughput: number; p50: number; p99: number; cycles: number }> {
  const r = await within(
    timedLoops(callers, ms, (caller) => client.withLock(name(caller), fn)),
    ms + 30_000,
    'the run',
  );
  if (r.errors > 0) throw new Error(`${r.errors} cycles failed: ${r.firstError}`);
  return {
    throughput: (r.cycles * 1000) / r.elapsedMs,
    p50: r.latencies.p(0.5),
    p99: r.latencies.p(0.99),
    cycles: r.cycles,
  };
}
