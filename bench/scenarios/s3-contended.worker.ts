/**
 * A child process of scenario 3: runs `callers` loops that each take the
 * shared lock and do a non-atomic read-modify-write of a Redis counter
 * (`"<count> <last caller>"`, so the same GET + SET also show hand-overs).
 * Driven over IPC by s3-contended.scenario.ts: prepare → ready, go → done
 * (once unmeasured as a warm-up, once measured),
 * close → closed, exit.
 */
import { Redis } from 'ioredis';
import { contenderById, type BenchEnv, type LockClient } from '../contenders/index.js';
import { now, SectionOrder } from '../support/stats.js';
import { MAX_CYCLES_PER_CALLER } from '../support/loops.js';
import { serveParent } from '../support/child.js';

export type ParentMessage =
  | { type: 'prepare'; contender: string; env: BenchEnv; counterUrl: string; name: string; counterKey: string; callers: number }
  | { type: 'go'; durationMs: number; /** An unmeasured round on other keys: JIT, pub/sub connections, script cache. */ warmup?: boolean }
  | { type: 'close' }
  | { type: 'exit' };

export type WorkerMessage =
  | { type: 'ready' }
  | {
      type: 'done';
      sections: number;
      switches: number;
      perCaller: number[];
      errors: number;
      maxWaitMs: number;
      waits: number[];
      /** Per wait after a caller's first: sections of other callers that ran between its previous section and this one (strict FIFO: callers − 1). */
      between: number[];
      maxBetween: number;
      elapsedMs: number;
      firstError?: string;
    }
  | { type: 'closed' };

/** Wait samples sent back per worker and run, at most. */
const MAX_WAIT_SAMPLES = 50_000;

let client: LockClient | undefined;
let counter: Redis | undefined;
let job: Extract<ParentMessage, { type: 'prepare' }> | undefined;

async function prepare(m: Extract<ParentMessage, { type: 'prepare' }>): Promise<WorkerMessage> {
  job = m;
  counter = new Redis(m.counterUrl, { lazyConnect: true });
  await counter.connect();
  client = await contenderById(m.contender).create(m.env);
  return { type: 'ready' };
}

async function go({ durationMs, warmup }: Extract<ParentMessage, { type: 'go' }>): Promise<WorkerMessage> {
  const { callers } = job!;
  const name = warmup ? `${job!.name}:warmup` : job!.name;
  const counterKey = warmup ? `${job!.counterKey}:warmup` : job!.counterKey;
  const lock = client!;
  const redis = counter!;
  let sections = 0;
  let errors = 0;
  let maxWaitMs = 0;
  const waits: number[] = [];
  let firstError: string | undefined;
  // The counter holds "<count> <last caller>": the same GET + SET also tell whether the lock changed hands.
  let switches = 0;
  const perCaller = new Array<number>(callers).fill(0);
  // The counter numbers the sections of all processes: how many of others' ran while a caller waited.
  const order = new SectionOrder(callers, MAX_WAIT_SAMPLES);
  const section = async (caller: string, index: number): Promise<void> => {
    const [count = '0', last] = (await redis.get(counterKey))?.split(' ') ?? [];
    if (last !== caller) switches++;
    order.entered(index, Number(count));
    await redis.set(counterKey, `${Number(count) + 1} ${caller}`);
  };
  const started = now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: callers }, async (_, index) => {
      const caller = `${process.pid}.${index}`;
      for (let i = 0; i < MAX_CYCLES_PER_CALLER && now() < deadline;) {
        // A wait lasts from the first request to entry, across a peer's give-ups and our retries of them.
        const requested = now();
        for (;;) {
          let entered = false;
          try {
            await lock.withLock(name, async () => {
              entered = true;
              const waited = now() - requested;
              maxWaitMs = Math.max(maxWaitMs, waited);
              if (waits.length < MAX_WAIT_SAMPLES) waits.push(waited);
              await section(caller, index);
            });
            sections++;
            perCaller[index]!++;
            i++;
            break;
          } catch (err) {
            errors++;
            firstError ??= err instanceof Error ? err.message : String(err);
            if (entered) {
              // Failed after the section ran (a release that threw): the section still counts.
              sections++;
              perCaller[index]!++;
              i++;
              break;
            }
            if (now() >= deadline) break;
          }
        }
      }
    }),
  );
  return {
    type: 'done',
    sections,
    switches,
    perCaller,
    errors,
    maxWaitMs,
    waits,
    between: order.between,
    maxBetween: order.max,
    elapsedMs: now() - started,
    firstError,
  };
}

async function close(): Promise<WorkerMessage> {
  await client?.close();
  await counter?.quit();
  client = undefined;
  counter = undefined;
  return { type: 'closed' };
}

serveParent<ParentMessage>({ prepare, go, close });
