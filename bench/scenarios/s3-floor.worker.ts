/**
 * The listening side of scenario 3's hand-off floor (s3-floor.ts): subscribes
 * to a channel of the bench's Redis and notes when each message arrives
 * (`process.hrtime`, one clock for every process of the machine). Driven over
 * IPC: listen → heard (after `count` messages), exit.
 */
import { Redis } from 'ioredis';
import { serveParent } from '../support/child.js';

export type ParentMessage = { type: 'listen'; url: string; channel: string; count: number } | { type: 'exit' };

export type WorkerMessage =
  | { type: 'subscribed' }
  /** Arrival times in ns (as strings), indexed by the message, which is its index. */
  | { type: 'heard'; at: string[] };

let sub: Redis | undefined;
let heard: ((at: string[]) => void) | undefined;
let at: string[] = [];
let got = 0;

async function listen({ url, channel, count }: Extract<ParentMessage, { type: 'listen' }>): Promise<WorkerMessage> {
  if (sub) {
    // The second ask: answered once every message has arrived.
    return new Promise((resolve) => {
      heard = (times) => resolve({ type: 'heard', at: times });
      if (got === count) heard(at);
    });
  }
  at = new Array<string>(count).fill('');
  sub = new Redis(url, { lazyConnect: true });
  await sub.connect();
  sub.on('message', (_channel: string, message: string) => {
    at[Number(message)] = String(process.hrtime.bigint());
    if (++got === count) heard?.(at);
  });
  await sub.subscribe(channel);
  return { type: 'subscribed' };
}

serveParent<ParentMessage>({ listen });
