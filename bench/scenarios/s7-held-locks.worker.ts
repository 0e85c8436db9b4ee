/**
 * A child process of scenario 7 (run with --expose-gc): holds `held` distinct
 * names at once through one LockManager with renewal on, counts the
 * provider's `extend` and `extendMany` calls over a window, and measures the heap the held
 * locks take. Driven over IPC by s7-held-locks.scenario.ts: hold → held, exit.
 */
import { InMemoryLockProvider, LockManager, type LockHandle, type LockProvider } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import type { BenchEnv, Store } from '../contenders/contender.js';
import { serveParent } from '../support/child.js';
import { now, sleep } from '../support/stats.js';

export type HeldParentMessage =
  | { type: 'hold'; store: Store; env: BenchEnv; name: string; held: number; ttl: number; windowMs: number }
  | { type: 'exit' };

export type HeldWorkerMessage = {
  type: 'held';
  /** heapUsed after GC with every lock held, minus heapUsed after GC before the first acquire, over `held`. */
  heapPerLockBytes: number;
  /** Store calls the renewal made per second during the window: `extend` calls plus `extendMany` calls (one per batch). */
  storeCallsPerSecond: number;
  /** Of those, `extendMany` calls per second. */
  batchCallsPerSecond: number;
  /** Locks renewed per second (each lock of a batch counts once). */
  renewalsPerSecond: number;
  /** Largest batch of one `extendMany` call in the window. */
  largestBatch: number;
  /** Renewals that answered "not yours" or threw during the window (a lease lost). */
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
  // Every store call of the renewal goes through extend or extendMany: count them (and the failures) by wrapping both.
  let calls = 0;
  let batchCalls = 0;
  let renewals = 0;
  let largestBatch = 0;
  let failures = 0;
  const extend = p.extend.bind(p);
  // (a store's extendMany may call its own extend per lock: those are not store calls of their own)
  let inBatch = false;
  p.extend = async (key, owner, ttl) => {
    if (inBatch) return extend(key, owner, ttl);
    calls++;
    renewals++;
    try {
      const ok = await extend(key, owner, ttl);
      if (!ok) failures++;
      return ok;
    } catch (err) {
      failures++;
      throw err;
    }
  };
  const extendMany = p.extendMany?.bind(p);
  if (extendMany) {
    p.extendMany = async (locks) => {
      calls++;
      batchCalls++;
      renewals += locks.length;
      largestBatch = Math.max(largestBatch, locks.length);
      try {
        inBatch = true;
        const answer = extendMany(locks);
        inBatch = false;
        const oks = await answer;
        failures += oks.filter((ok) => !ok).length;
        return oks;
      } catch (err) {
        inBatch = false;
        failures += locks.length;
        throw err;
      }
    };
  }
  const manager = new LockManager({ provider: p, ttl: m.ttl });
  const handles: LockHandle[] = [];
  try {
    // Warm-up: connections, scripts, table, JIT; then the baseline.
    await (await manager.acquire(`${m.name}:warmup`)).release();
    const before = heapAfterGc();
    const started = now();
    for (let i = 0; i < m.held; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, m.held - i) }, (_, j) =>
        manager.acquire(`${m.name}:${i + j}`),
      );
      handles.push(...(await Promise.all(batch)));
    }
    const acquireMs = now() - started;
    const heapPerLockBytes = (heapAfterGc() - before) / m.held;
    calls = batchCalls = renewals = largestBatch = failures = 0;
    const windowStart = now();
    await sleep(m.windowMs);
    const windowMs = now() - windowStart;
    const perSecond = (n: number): number => (n * 1000) / windowMs;
    const lost = handles.filter((h) => h.signal.aborted).length;
    return {
      type: 'held',
      heapPerLockBytes,
      storeCallsPerSecond: perSecond(calls),
      batchCallsPerSecond: perSecond(batchCalls),
      renewalsPerSecond: perSecond(renewals),
      largestBatch,
      extendFailures: failures,
      lost,
      acquireMs,
      windowMs,
    };
  } finally {
    await manager.close();
    await p.close();
  }
}

serveParent<HeldParentMessage>({ hold });
