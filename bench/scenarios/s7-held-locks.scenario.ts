import type { Store } from '../contenders/contender.js';
import { answer, ChildWorker, compiledWorker } from '../support/child.js';
import type { GrowthTable } from '../support/growth.js';
import { fmt, type BenchContext } from '../support/runner.js';
import type { HeldParentMessage, HeldWorkerMessage } from './s7-held-locks.worker.js';

const workerPath = compiledWorker('./s7-held-locks.worker.js', import.meta.url);

/** Lease of the held locks: short, so renewal (every ttl / 3) runs several times in a window. */
export const HELD_TTL = 3_000;
/** Store calls per second a batched renewal should need: one call per 50 locks per renewal round. */
export const BATCH_SIZE = 50;

export interface HeldOptions {
  sizes: readonly number[];
  stores: readonly Store[];
  windowMs: number;
}

/**
 * Scenario 7, "many held locks": one process (a fresh child per store and
 * size, run with --expose-gc) holds N distinct names at once with renewal on
 * (ttl 3 s). Heap per held lock (heapUsed after GC, before the first acquire
 * and with all held, over N) and the renewal's store calls per second over
 * the window (`extend` calls, plus `extendMany` calls that renew a batch
 * each), beside the per-lock figure held / (ttl/3) and the batched target
 * held / (ttl/3) / 50 (at or below 1.00x meets it).
 */
export async function heldLocks(ctx: BenchContext, o: HeldOptions): Promise<GrowthTable> {
  const renewEverySec = HELD_TTL / 3 / 1000;
  const table: GrowthTable = {
    scenario: 's7',
    title: `many held locks, one process, renewal on (ttl ${HELD_TTL / 1000} s: a renewal every ${renewEverySec} s per lock), window ${fmt(o.windowMs / 1000, 1)} s`,
    columns: [
      'store',
      'held',
      'heap/lock',
      'renewal store calls/s',
      'locks renewed/s',
      'largest batch',
      'per-lock (held/(ttl/3))',
      `batched target (/${BATCH_SIZE})`,
      'vs target',
      'failed renewals',
      'lost',
      'acquire all',
    ],
    rows: [],
    notes: [
      `store calls counted by wrapping the provider's extend and extendMany (one extendMany call renews a batch of locks); heap = process.memoryUsage().heapUsed after gc(), all held minus before the first acquire, / held (includes the store client's share)`,
      `batched target: held / (ttl/3) / ${BATCH_SIZE} calls per second, i.e. one store call renews ${BATCH_SIZE} locks`,
    ],
  };
  for (const store of o.stores) {
    for (const held of o.sizes) {
      const worker = new ChildWorker<HeldParentMessage, HeldWorkerMessage>(workerPath, [
        ...process.execArgv,
        '--expose-gc',
      ]);
      try {
        const m: HeldParentMessage = {
          type: 'hold',
          store,
          env: ctx.env,
          name: `bench:s7:${store}:${held}:${Date.now()}`,
          held,
          ttl: HELD_TTL,
          windowMs: o.windowMs,
        };
        const r = answer(await worker.ask(m, o.windowMs + 180_000), 'held');
        const perLock = held / renewEverySec;
        const target = perLock / BATCH_SIZE;
        ctx.log(
          `  s7 ${store} ${held} held: ${fmt(r.storeCallsPerSecond, 1)} renewal calls/s (${fmt(r.renewalsPerSecond, 1)} locks/s), ${fmt(r.heapPerLockBytes)} B/lock`,
        );
        table.rows.push({
          cells: [
            store,
            fmt(held),
            `${fmt(r.heapPerLockBytes)} B`,
            fmt(r.storeCallsPerSecond, 1),
            fmt(r.renewalsPerSecond, 1),
            fmt(r.largestBatch),
            fmt(perLock, 1),
            fmt(target, 2),
            `${fmt(r.storeCallsPerSecond / target, 2)}x`,
            fmt(r.extendFailures),
            fmt(r.lost),
            `${fmt(r.acquireMs)} ms`,
          ],
          raw: {
            store,
            held,
            ttl: HELD_TTL,
            ...r,
            perLockCallsPerSecond: perLock,
            batchedTargetCallsPerSecond: target,
          },
        });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        ctx.log(`  s7 ${store} ${held} held: FAILED ${message}`);
        table.rows.push({
          cells: [store, fmt(held), 'failed', '-', '-', '-', '-', '-', '-', '-', '-', '-'],
          raw: { store, held, failed: message },
        });
      } finally {
        await worker.stop();
      }
    }
  }
  return table;
}
