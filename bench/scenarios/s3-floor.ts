import { Redis } from 'ioredis';
import pg from 'pg';
import { answer, ChildWorker, compiledWorker } from '../support/child.js';
import { median, sleep } from '../support/stats.js';
import type { ParentMessage, WorkerMessage } from './s3-floor.worker.js';

const workerPath = compiledWorker('./s3-floor.worker.js', import.meta.url);

/** Notices sent to measure the floor. */
const SAMPLES = 400;
/** Pause between notices: long enough for the listening process to go idle, as a waiting process is. */
const PAUSE_MS = 2;

/** The notifying side: a statement's reply (a section's or a release's end), then the notice. */
interface Notifier {
  connect(): Promise<unknown>;
  /** A round trip, as at a section's end. */
  reply(): Promise<unknown>;
  notify(message: string): Promise<unknown>;
  close(): Promise<unknown> | void;
}

function notifier(store: 'redis' | 'postgres', url: string, channel: string): Notifier {
  if (store === 'redis') {
    const pub = new Redis(url, { lazyConnect: true });
    return {
      connect: () => pub.connect(),
      reply: () => pub.get(channel),
      notify: (m) => pub.publish(channel, m),
      close: () => pub.disconnect(),
    };
  }
  const pub = new pg.Client({ connectionString: url });
  return {
    connect: () => pub.connect(),
    reply: () => pub.query('SELECT 1'),
    notify: (m) => pub.query(`NOTIFY "${channel}", '${m}'`),
    close: () => pub.end(),
  };
}

/**
 * The hand-off floor of this machine, in µs: from a process that has just had
 * a reply from the store (a section's end) to another, idle process hearing a
 * message it sent through the store (Redis: PUBLISH → subscriber; PostgreSQL:
 * NOTIFY, committed, → LISTEN), the median of {@link SAMPLES}. Any lock whose
 * hand-off between processes goes through that store pays at least this per
 * cross-process hand-off, however little it computes; on Redis it is mostly
 * the wake-up of idle processes (Redis's and the listener's).
 */
export async function handOffFloorUs(url: string, store: 'redis' | 'postgres' = 'redis'): Promise<number> {
  const worker = new ChildWorker<ParentMessage, WorkerMessage>(workerPath);
  const channel = `bench:s3:floor:${process.pid}`;
  const pub = notifier(store, url, channel);
  try {
    await pub.connect();
    const listen: ParentMessage = { type: 'listen', store, url, channel, count: SAMPLES };
    answer(await worker.ask(listen, 30_000), 'subscribed');
    const heard = worker.ask(listen, 60_000);
    const sent: bigint[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      await sleep(PAUSE_MS);
      await pub.reply();
      sent.push(process.hrtime.bigint());
      await pub.notify(String(i));
    }
    const { at } = answer(await heard, 'heard');
    return median(at.map((t, i) => Number(BigInt(t) - sent[i]!) / 1000));
  } finally {
    await pub.close();
    await worker.stop();
  }
}

/**
 * The most of the no-lock ceiling that a lock can reach in scenario 3 when
 * every cross-process hand-off costs `floorUs` and nothing else does: turns of
 * `turn` sections in one process (strict FIFO with 4 callers per process: 4),
 * then one hand-off. `ceiling`: sections/s of the section alone.
 */
export function floorBound(ceiling: number, floorUs: number, turn: number): number {
  const turnUs = (turn * 1e6) / ceiling;
  return turnUs / (turnUs + floorUs);
}
