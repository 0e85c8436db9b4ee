/**
 * A child process of scenarios 9 (semaphore) and 10 (read/write): runs
 * `callers` loops on one name, each section a few Redis counter calls around a
 * short pause (`sectionMs`: the work a permit or a read guards), checked store-side:
 * - semaphore: `INCR inside` on entry (never above the limit), `DECR` on exit;
 * - read/write: a reader `INCR readers` then `GET writers` (must be 0), a
 *   writer `INCR writers` then `GET readers` (must be 0, and writers 1) and a
 *   non-atomic read-modify-write of `written` (exact only if writes exclude);
 * and `INCR seq` numbers the sections of all processes (the order each wait ran behind).
 * Driven over IPC like scenario 3's worker: prepare → ready, go → done, close → closed.
 */
import { Redis } from 'ioredis';
import { contenderById, type BenchEnv } from '../contenders/index.js';
import type { PermitClient } from '../contenders/permits.contenders.js';
import { MAX_CYCLES_PER_CALLER } from '../support/loops.js';
import { serveParent } from '../support/child.js';
import { now, sleep } from '../support/stats.js';
import { CallerTally, type CallerTallies } from '../support/caller-tally.js';

export type PermitParentMessage =
  | {
      type: 'prepare';
      contender: string;
      env: BenchEnv;
      name: string;
      /** Prefix of the counter keys of this run. */
      counters: string;
      callers: number;
      workload: 'semaphore' | 'read-write';
      /** The pause inside every section, in ms. */
      sectionMs: number;
      /** Semaphore permits (scenario 9). */
      limit?: number;
      /** Read/write: each caller's every `writeEvery`-th section is a write (scenario 10: 10, so 90 % reads). */
      writeEvery?: number;
    }
  | { type: 'go'; durationMs: number; /** An unmeasured round on other keys. */ warmup?: boolean }
  | { type: 'close' }
  | { type: 'exit' };

export type PermitWorkerMessage =
  | { type: 'ready' }
  | ({
      type: 'done';
      writes: number;
      /** Semaphore: the most holders inside at once (the INCR's answer); read/write: the most readers. */
      maxInside: number;
      /** Entries that found a holder they must exclude (semaphore: above the limit). */
      conflicts: number;
      /** The CPU time this process used during the run, in µs (user and system). */
      cpuUs: number;
    } & CallerTallies)
  | { type: 'closed' };

let client: PermitClient | undefined;
let counter: Redis | undefined;
let job: Extract<PermitParentMessage, { type: 'prepare' }> | undefined;

async function prepare(m: Extract<PermitParentMessage, { type: 'prepare' }>): Promise<PermitWorkerMessage> {
  job = m;
  counter = new Redis(m.env.redisUrl, { lazyConnect: true });
  await counter.connect();
  client = (await contenderById(m.contender).create(m.env)) as PermitClient;
  return { type: 'ready' };
}

/** The answers of a pipeline, as numbers (a GET of an unset key: 0). */
async function numbers(p: ReturnType<Redis['pipeline']>): Promise<number[]> {
  const replies = (await p.exec()) ?? [];
  return replies.map(([err, value]) => {
    if (err) throw err;
    return Number(value ?? 0);
  });
}

async function go({ durationMs, warmup }: Extract<PermitParentMessage, { type: 'go' }>): Promise<PermitWorkerMessage> {
  const { callers, workload, sectionMs, limit = 1, writeEvery = 10 } = job!;
  const name = warmup ? `${job!.name}:warmup` : job!.name;
  const key = (k: string): string => `${job!.counters}${warmup ? ':warmup' : ''}:${k}`;
  const lock = client!;
  const redis = counter!;
  let writes = 0;
  let maxInside = 0;
  let conflicts = 0;
  const tally = new CallerTally(callers);
  const order = tally.order;

  const semaphore = async (caller: number): Promise<void> => {
    const [inside, seq] = await numbers(redis.pipeline().incr(key('inside')).incr(key('seq')));
    order.entered(caller, seq!);
    maxInside = Math.max(maxInside, inside!);
    if (inside! > limit) conflicts++;
    await sleep(sectionMs);
    await redis.decr(key('inside'));
  };
  const read = async (caller: number): Promise<void> => {
    const [readers, writers, seq] = await numbers(
      redis.pipeline().incr(key('readers')).get(key('writers')).incr(key('seq')),
    );
    order.entered(caller, seq!);
    maxInside = Math.max(maxInside, readers!);
    if (writers !== 0) conflicts++;
    await sleep(sectionMs);
    await redis.decr(key('readers'));
  };
  const write = async (caller: number): Promise<void> => {
    const [writers, readers, written, seq] = await numbers(
      redis.pipeline().incr(key('writers')).get(key('readers')).get(key('written')).incr(key('seq')),
    );
    order.entered(caller, seq!);
    if (writers !== 1 || readers !== 0) conflicts++;
    await sleep(sectionMs);
    await redis
      .pipeline()
      .set(key('written'), String(written! + 1))
      .decr(key('writers'))
      .exec();
  };

  const deadline = now() + durationMs;
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      for (let i = 0; i < MAX_CYCLES_PER_CALLER && now() < deadline; i++) {
        const isWrite = workload === 'read-write' && i % writeEvery === caller % writeEvery;
        const hold =
          workload === 'semaphore' ? { limit } : { mode: isWrite ? ('exclusive' as const) : ('shared' as const) };
        const section = workload === 'semaphore' ? semaphore : isWrite ? write : read;
        const entered = await tally.enter(caller, deadline, (enter) =>
          lock.withPermit(
            name,
            async () => {
              enter();
              await section(caller);
            },
            hold,
          ),
        );
        if (!entered) break;
        if (isWrite) writes++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return { type: 'done', writes, maxInside, conflicts, cpuUs: cpu.user + cpu.system, ...tally.result() };
}

async function close(): Promise<PermitWorkerMessage> {
  await client?.close();
  await counter?.quit();
  client = undefined;
  counter = undefined;
  return { type: 'closed' };
}

serveParent<PermitParentMessage>({ prepare, go, close });
