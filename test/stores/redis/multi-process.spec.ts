/**
 * Mutual exclusion across processes: 4 children, each its own Nest
 * application context and Redis connection, run sections on one lock name;
 * then 2 children of one app during a client migration, one on ioredis and
 * one on node-redis: one queue, one token sequence.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ChildLines, spawnFixture } from '../../support/child-process.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROCESSES = 4;
const SECTIONS = 600; // per process
const CONCURRENCY = 2; // callers per process, so waiters queue both locally and across processes

test(`${PROCESSES} processes x ${SECTIONS} sections: exact counter, no overlap, tokens increase in entry order, processes take turns in FIFO order`, async () => {
  await sectionsOn(Array.from({ length: PROCESSES }, () => 'ioredis' as const));
}, 90_000);

test(`an ioredis and a node-redis process x ${SECTIONS} sections on one lock: exact counter, no overlap, one token sequence, one FIFO queue`, async () => {
  await sectionsOn(['ioredis', 'node-redis']);
}, 90_000);

/** Runs the workers (one per entry, on that client), then checks their sections. */
async function sectionsOn(clients: ReadonlyArray<'ioredis' | 'node-redis'>): Promise<void> {
  const PROCESSES = clients.length;
  const run = randomBytes(6).toString('hex');
  const counterKey = `mp-counter:${run}`;
  const redis = new Redis(url);
  const children = clients.map((client) =>
    spawnFixture(new URL('./fixtures/mutex-worker.js', import.meta.url), {
      url,
      client,
      name: 'mp',
      keyPrefix: `mp:${run}:`,
      counterKey,
      sections: SECTIONS,
      concurrency: CONCURRENCY,
    }),
  );
  try {
    const lines = children.map((c) => new ChildLines(c));
    await Promise.all(lines.map((l) => l.next('ready', 30_000)));
    for (const c of children) c.stdin!.write('go\n');
    const results = await Promise.all(lines.map((l) => l.next('result ', 60_000)));
    const records = results
      .flatMap((r, proc) => (JSON.parse(r) as Array<[number, string, string, number]>).map((rec) => ({ rec, proc })))
      .map(({ rec: [token, enter, exit, caller], proc }) => ({
        token,
        enter: BigInt(enter),
        exit: BigInt(exit),
        proc,
        caller: `${proc}.${caller}`,
      }))
      .sort((a, b) => (a.enter < b.enter ? -1 : a.enter > b.enter ? 1 : 0));

    expect(records).toHaveLength(PROCESSES * SECTIONS);
    expect(Number(await redis.get(counterKey))).toBe(PROCESSES * SECTIONS);
    let overlaps = 0;
    let disorder = 0;
    for (let i = 1; i < records.length; i++) {
      if (records[i].enter <= records[i - 1].exit) overlaps++;
      if (records[i].token <= records[i - 1].token) disorder++;
    }
    expect(overlaps).toBe(0);
    expect(disorder).toBe(0);

    // Local hand-offs happened (a process's next waiter took over with the next token of the block), and while
    // every process still had sections to run, none kept the lock past one batch of its own waiters (a margin of 2x).
    let local = 0;
    let run = 1;
    let longestRun = 1;
    const own = Array.from({ length: PROCESSES }, (_, proc) => records.filter((r) => r.proc === proc));
    const allActiveFrom = own.map((r) => r[0].enter).reduce((a, b) => (a > b ? a : b));
    const allActiveUntil = own.map((r) => r.at(-1)!.enter).reduce((a, b) => (a < b ? a : b));
    const first = records.findIndex((r) => r.enter >= allActiveFrom);
    for (let i = first + 1; i < records.length && records[i].enter < allActiveUntil; i++) {
      const same = records[i].proc === records[i - 1].proc;
      if (same && records[i].token === records[i - 1].token + 1) local++;
      run = same ? run + 1 : 1;
      longestRun = Math.max(longestRun, run);
    }
    expect(local).toBeGreaterThan(0);
    expect(longestRun).toBeLessThanOrEqual(2 * CONCURRENCY);

    // FIFO order across processes, within the turns' extra half: between two sections of one caller run at
    // most 1.5 times the sections of strict FIFO (every other caller once). A process whose release and next
    // queueing call reached Redis apart, overtaken by another process's next turn, would go past it.
    const callers = PROCESSES * CONCURRENCY;
    const lastSeen = new Map<string, number>();
    let mostBetween = 0;
    for (let i = first; i < records.length && records[i].enter < allActiveUntil; i++) {
      const before = lastSeen.get(records[i].caller);
      if (before !== undefined) mostBetween = Math.max(mostBetween, i - before - 1);
      lastSeen.set(records[i].caller, i);
    }
    expect(mostBetween).toBeGreaterThanOrEqual(callers - 1);
    expect(mostBetween).toBeLessThanOrEqual(Math.floor(1.5 * (callers - 1)));
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await redis.del(counterKey);
    await redis.quit();
  }
}
