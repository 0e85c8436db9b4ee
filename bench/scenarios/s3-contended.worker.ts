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
import { now } from '../support/stats.js';
import { MAX_CYCLES_PER_CALLER } from '../support/loops.js';
import { CallerTally, type CallerTallies } from '../support/caller-tally.js';
import { serveParent } from '../support/child.js';

export type ParentMessage =
  | {
      type: 'prepare';
      contender: string;
      env: BenchEnv;
      counterUrl: string;
      name: string;
      counterKey: string;
      callers: number;
    }
  | {
      type: 'go';
      durationMs: number;
      /** An unmeasured round on other keys: JIT, pub/sub connections, script cache. */ warmup?: boolean;
    }
  | { type: 'close' }
  | { type: 'exit' };

export type WorkerMessage =
  { type: 'ready' } | ({ type: 'done'; switches: number } & CallerTallies) | { type: 'closed' };

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
  // The counter holds "<count> <last caller>": the same GET + SET also tell whether the lock changed hands.
  let switches = 0;
  // The counter numbers the sections of all processes: how many of others' ran while a caller waited.
  const tally = new CallerTally(callers);
  const section = async (caller: string, index: number): Promise<void> => {
    const [count = '0', last] = (await redis.get(counterKey))?.split(' ') ?? [];
    if (last !== caller) switches++;
    tally.order.entered(index, Number(count));
    await redis.set(counterKey, `${Number(count) + 1} ${caller}`);
  };
  const deadline = now() + durationMs;
  await Promise.all(
    Array.from({ length: callers }, async (_, index) => {
      const caller = `${process.pid}.${index}`;
      for (let i = 0; i < MAX_CYCLES_PER_CALLER && now() < deadline; i++) {
        const entered = await tally.enter(index, deadline, (enter) =>
          lock.withLock(name, async () => {
            enter();
            await section(caller, index);
          }),
        );
        if (!entered) break;
      }
    }),
  );
  return { type: 'done', switches, ...tally.result() };
}

async function close(): Promise<WorkerMessage> {
  await client?.close();
  await counter?.quit();
  client = undefined;
  counter = undefined;
  return { type: 'closed' };
}

serveParent<ParentMessage>({ prepare, go, close });
