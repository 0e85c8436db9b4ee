/**
 * A child process of scenario 7 (run with --expose-gc): holds `held` distinct
 * names at once through one LockManager with renewal on, counts the
 * provider's `extend` calls over a window, and measures the heap the held
 * locks take. Driven over IPC by s7-held-locks.scenario.ts: hold → held, exit.
 */
import { InMemoryLockProvider, LockManager, type LockHandle, type LockProvider } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import type { BenchEnv, Store } from '../contenders/contender.js';
import { serveParent } from '../support/child.js';
import { now, sleep } from '../support/stats.js';

export type HeldParentMessage = { type: 'hold'; store: Store; env: BenchEnv; name: string; held: number; ttl: number; windowMs: number } | { type: 'exit' };

export type HeldWorkerMessage = {
  type: 'held';
  /** heapUsed after GC with every lock held, minus heapUsed after GC before the first acquire, over `held`. */
  heapPerLockBytes: number;
  /** `extend` calls the renewal made per second during the window. */
  extendsPerSecond: number;
  /** `extend` calls that answered "not yours" or threw during the window (a lease lost). */
  extendFailures: number;
  /** Locks whose signal had aborted at the end of the window. */
  lost: number;
  /** How long acquiring all of them took, in ms. */
  acquireMs: number;
  windowMs: number;
};

/** Acquires in batches, so a store sees a bounded number of requests in flight. */
const BATCH = 200;

function provider(store: Store, env: BenchEnv): LockProvider {
  if (store === 'redis') return new RedisLockProvider({ redis: env.redisUrl });
  if (store === 'postgres') return new PostgresLockProvider({ connection: env.pgUrl, tableName: 'bench_nest_locks' });
  return new InMemoryLockProvider();
}

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the worker with --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function hold(m: Extract<HeldParentMessage, { type: 'hold' }>): Promise<HeldWorkerMessage> {
  const p = provider(m.store, m.env);
  // Every store call of the renewal goes through extend: count them (and the failures) by wrapping it.
  let calls = 0;
  let failures = 0;
  const extend = p.extend.bind(p);
  p.extend = async (key, owner, ttl) => {
    calls++;
    try {
      const ok = await extend(key, owner, ttl);
      if (!ok) failures++;
      return ok;
    } catch (err) {
      failures++;
      throw err;
    }
  };
  const manager = new LockManager({ provider: p, ttl: m.ttl });
  const handles: LockHandle[] = [];
  try {
    // Warm-up: connections, scripts, table, JIT; then the baseline.
    await (await manager.acquire(`${m.name}:warmup`)).release();
    const before = heapAfterGc();
    const started = now();
    for (let i = 0; i < m.held; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, m.held - i) }, (_, j) => manager.acquire(`${m.name}:${i + j}`));
      handles.push(...(await Promise.all(batch)));
    }
    const acquireMs = now() - started;
    const heapPerLockBytes = (heapAfterGc() - before) / m.held;
    calls = 0;
    failures = 0;
    const windowStart = now();
    await sleep(m.windowMs);
    const windowMs = now() - windowStart;
    const extendsPerSecond = (calls * 1000) / windowMs;
    const extendFailures = failures;
    const lost = handles.filter((h) => h.signal.aborted).length;
    return { type: 'held', heapPerLockBytes, extendsPerSecond, extendFailures, lost, acquireMs, windowMs };
  } finally {
    await manager.close();
    await p.close();
  }
}

serveParent<HeldParentMessage>({ hold });
