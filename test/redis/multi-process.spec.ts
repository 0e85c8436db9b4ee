/**
 * Mutual exclusion across processes: 4 children, each its own Nest
 * application context and Redis connection, run sections on one lock name.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ChildLines, spawnFixture } from './redis-server.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROCESSES = 4;
const SECTIONS = 600; // per process
const CONCURRENCY = 2; // callers per process, so waiters queue both locally and across processes

test(`${PROCESSES} processes x ${SECTIONS} sections: exact counter, no overlap, tokens increase in entry order`, async () => {
  const run = randomBytes(6).toString('hex');
  const counterKey = `mp-counter:${run}`;
  const redis = new Redis(url);
  const children = Array.from({ length: PROCESSES }, () =>
    spawnFixture('mutex-worker', { url, name: 'mp', keyPrefix: `mp:${run}:`, counterKey, sections: SECTIONS, concurrency: CONCURRENCY }),
  );
  try {
    const lines = children.map((c) => new ChildLines(c));
    await Promise.all(lines.map((l) => l.next('ready', 30_000)));
    for (const c of children) c.stdin!.write('go\n');
    const results = await Promise.all(lines.map((l) => l.next('result ', 60_000)));
    const records = results
      .flatMap((r) => JSON.parse(r) as Array<[number, string, string]>)
      .map(([token, enter, exit]) => ({ token, enter: BigInt(enter), exit: BigInt(exit) }))
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
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await redis.del(counterKey);
    await redis.quit();
  }
}, 90_000);
