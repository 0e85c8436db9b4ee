/**
 * A child process of scenario 8: `callers` callers of this process each wait
 * once for the shared name (nest-lock on Redis, its defaults) and record when
 * their section started and ended (wall clock in ms, comparable across the
 * processes of one machine). Driven over IPC by s8-many-waiters.scenario.ts:
 * prepare → ready, queue → queued (every call issued), collect → sections,
 * close → closed, exit.
 */
import { contenderById, type BenchEnv, type LockClient } from '../contenders/index.js';
import { serveParent } from '../support/child.js';

export type WaiterParentMessage =
  | { type: 'prepare'; contender: string; env: BenchEnv }
  | { type: 'queue'; name: string; callers: number; firstId: number }
  | { type: 'collect' }
  | { type: 'close' }
  | { type: 'exit' };

/** One section: the caller's id, its process, and when it started and ended. */
export interface Section {
  id: number;
  pid: number;
  start: number;
  end: number;
}

export type WaiterWorkerMessage =
  | { type: 'ready' }
  | { type: 'queued' }
  | { type: 'sections'; sections: Section[]; errors: number; firstError?: string }
  | { type: 'closed' };

/** Milliseconds since the epoch, with performance.now()'s resolution. */
const wall = (): number => performance.timeOrigin + performance.now();

let client: LockClient | undefined;
let running: Promise<void> | undefined;
const sections: Section[] = [];
let errors = 0;
let firstError: string | undefined;

async function prepare(m: Extract<WaiterParentMessage, { type: 'prepare' }>): Promise<WaiterWorkerMessage> {
  client = await contenderById(m.contender).create(m.env);
  return { type: 'ready' };
}

async function queue(m: Extract<WaiterParentMessage, { type: 'queue' }>): Promise<WaiterWorkerMessage> {
  sections.length = 0;
  errors = 0;
  firstError = undefined;
  const lock = client!;
  running = Promise.all(
    Array.from({ length: m.callers }, async (_, i) => {
      try {
        await lock.withLock(m.name, async () => {
          const start = wall();
          await new Promise((r) => setImmediate(r));
          sections.push({ id: m.firstId + i, pid: process.pid, start, end: wall() });
        });
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }),
  ).then(() => undefined);
  // Let every call reach its queue before the parent releases.
  await new Promise((r) => setTimeout(r, 200));
  return { type: 'queued' };
}

async function collect(): Promise<WaiterWorkerMessage> {
  await running;
  return { type: 'sections', sections: [...sections], errors, firstError };
}

async function close(): Promise<WaiterWorkerMessage> {
  await client?.close();
  client = undefined;
  return { type: 'closed' };
}

serveParent<WaiterParentMessage>({ prepare, queue, collect, close });
