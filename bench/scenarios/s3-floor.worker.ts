/**
 * The listening side of the hand-off floor of scenarios 3 and 6b
 * (s3-floor.ts): subscribes to a channel of the bench's Redis (SUBSCRIBE) or
 * of its PostgreSQL (LISTEN) and notes when each message arrives
 * (`process.hrtime`, one clock for every process of the machine). Driven over
 * IPC: listen → subscribed, listen again → heard (after `count` messages), exit.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { serveParent } from '../support/child.js';

export type ParentMessage =
  { type: 'listen'; store: 'redis' | 'postgres'; url: string; channel: string; count: number } | { type: 'exit' };

export type WorkerMessage =
  | { type: 'subscribed' }
  /** Arrival times in ns (as strings), indexed by the message, which is its index. */
  | { type: 'heard'; at: string[] };

let subscribed = false;
let heard: ((at: string[]) => void) | undefined;
let at: string[] = [];
let got = 0;
let count = 0;

/** Notes the arrival of message `message` (its index). */
function arrived(message: string): void {
  at[Number(message)] = String(process.hrtime.bigint());
  if (++got === count) heard?.(at);
}

async function listen(m: Extract<ParentMessage, { type: 'listen' }>): Promise<WorkerMessage> {
  if (subscribed) {
    // The second ask: answered once every message has arrived.
    return new Promise((resolve) => {
      heard = (times) => resolve({ type: 'heard', at: times });
      if (got === count) heard(at);
    });
  }
  count = m.count;
  at = new Array<string>(count).fill('');
  if (m.store === 'redis') {
    const sub = new Redis(m.url, { lazyConnect: true });
    await sub.connect();
    sub.on('message', (_channel: string, message: string) => arrived(message));
    await sub.subscribe(m.channel);
  } else {
    const sub = new pg.Client({ connectionString: m.url });
    await sub.connect();
    sub.on('notification', (n) => arrived(n.payload ?? ''));
    await sub.query(`LISTEN "${m.channel}"`);
  }
  subscribed = true;
  return { type: 'subscribed' };
}

serveParent<ParentMessage>({ listen });
