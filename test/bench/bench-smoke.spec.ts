/**
 * Behaviour of the benchmark's own building blocks, never timings: the raw
 * Redis baseline really excludes (its counter comes out exact, and its
 * compare-and-delete never frees a key someone else holds), the in-memory
 * adapters exclude too, and the ratios of the table are computed against the
 * right rows. Scenarios 7 to 11 run once at their smallest size (their
 * workers are the build's: run `npm run build:all` first).
 */
import { Redis } from 'ioredis';
import { COMPARE_AND_DELETE, rawRedis } from '../../bench/contenders/raw-redis.contender.js';
import { asyncMutex } from '../../bench/contenders/async-mutex.contender.js';
import { rawMemory } from '../../bench/contenders/raw-memory.contender.js';
import {
  oursMemory,
  oursMemoryOtelIdle,
  oursMemoryOtelSdk,
  oursNodeRedis,
  oursRedis,
  oursRedisReplicated,
  oursRedisStrict,
} from '../../bench/contenders/ours.contenders.js';
import { RedisServer } from '../support/redis-server.js';
import type { BenchEnv, LockClient } from '../../bench/contenders/contender.js';
import { addRatios, buildRow, target } from '../../bench/support/results.js';
import { targetLines, targets } from '../../bench/support/report.js';
import { floorBound, handOffFloorUs } from '../../bench/scenarios/s3-floor.js';
import { POSTGRES_URL } from '../support/pg-test-env.js';
import { median, quantile, SectionOrder, spread } from '../../bench/support/stats.js';
import { heldLocks } from '../../bench/scenarios/s7-held-locks.scenario.js';
import { judge, manyWaiters } from '../../bench/scenarios/s8-many-waiters.scenario.js';
import type { BenchContext } from '../../bench/support/runner.js';
import { semaphore, SEMAPHORE_LIMIT } from '../../bench/scenarios/s9-semaphore.scenario.js';
import { readWrite } from '../../bench/scenarios/s10-read-write.scenario.js';
import { leftoverKeys } from '../../bench/scenarios/s11-leftover-keys.scenario.js';
import { FENCE_GRACE_MS } from '../../lib/stores/redis/redis-lock.scripts.js';
import { inMemory } from '../../bench/scenarios/s4-in-memory.scenario.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const env: BenchEnv = { redisUrl, pgUrl: 'postgres://unused', mysqlUrl: 'mysql://unused', ttl: 10_000 };
const prefix = `bench-smoke:${process.pid}:${Date.now()}`;

/** `callers` × `rounds` sections, each a read-modify-write with an await in between. */
async function hammer(
  client: LockClient,
  name: string,
  callers: number,
  rounds: number,
  read: () => Promise<number>,
  write: (v: number) => Promise<void>,
): Promise<void> {
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = 0; i < rounds; i++) {
        await client.withLock(name, async () => {
          const v = await read();
          await new Promise((r) => setImmediate(r));
          await write(v + 1);
        });
      }
    }),
  );
}

describe('raw Redis baseline (SET NX PX + compare-and-delete)', () => {
  let redis: Redis;
  beforeAll(async () => {
    redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  test('two clients × 4 callers: the non-atomic counter comes out exact and the key is free afterwards', async () => {
    const [a, b] = await Promise.all([rawRedis.create(env), rawRedis.create(env)]);
    const name = `${prefix}:lock`;
    const counter = `${prefix}:counter`;
    await redis.set(counter, '0');
    const read = async (): Promise<number> => Number(await redis.get(counter));
    const write = async (v: number): Promise<void> => {
      await redis.set(counter, String(v));
    };
    try {
      await Promise.all([hammer(a!, name, 4, 10, read, write), hammer(b!, name, 4, 10, read, write)]);
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
    expect(await read()).toBe(80);
    expect(await redis.exists(name)).toBe(0);
  });

  test('compare-and-delete leaves a key held by another token alone', async () => {
    const key = `${prefix}:cad`;
    await redis.set(key, 'other-owner', 'PX', 10_000);
    expect(await redis.eval(COMPARE_AND_DELETE, 1, key, 'my-token')).toBe(0);
    expect(await redis.get(key)).toBe('other-owner');
    expect(await redis.eval(COMPARE_AND_DELETE, 1, key, 'other-owner')).toBe(1);
    expect(await redis.exists(key)).toBe(0);
  });
});

describe('nest-lock Redis contenders', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    await redis.quit();
  });

  // With local hand-off the 3 wait in the process behind its holder; with localHandOff: false each queues in Redis.
  test.each([
    [oursRedis.id, oursRedis, 0],
    [oursNodeRedis.id, oursNodeRedis, 0],
    [oursRedisStrict.id, oursRedisStrict, 3],
  ])(
    '%s: with one caller holding, the other 3 callers of the process queue in Redis as its mode says',
    async (_id, contender, queued) => {
      const client = await contender.create(env);
      const name = `${prefix}:${contender.id}`;
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      try {
        const holder = client.withLock(name, () => held);
        await new Promise((r) => setTimeout(r, 50));
        const waiters = Array.from({ length: 3 }, () => client.withLock(name, async () => {}));
        let length = 0;
        for (let i = 0; i < 100 && length < queued; i++) {
          await new Promise((r) => setTimeout(r, 20));
          length = await redis.llen(`{lock:${name}}:q`);
        }
        await new Promise((r) => setTimeout(r, 100)); // and no more than that
        expect(await redis.llen(`{lock:${name}}:q`)).toBe(queued);
        release();
        await Promise.all([holder, ...waiters]);
      } finally {
        release();
        await client.close();
      }
    },
  );
  test('waitForReplicas contender: starts a replica of the bench Redis, grants through it, and stops it on close', async () => {
    const master = await RedisServer.start(); // its own: the contender attaches a replica to the bench's Redis
    try {
      const client = await oursRedisReplicated.create({ ...env, redisUrl: master.url });
      try {
        expect(await client.withLock(`${prefix}:replicated`, async () => 7)).toBe(7);
        expect(await master.command('info', 'replication')).toMatch(/connected_slaves:1/);
      } finally {
        await client.close();
      }
      await master.until((info) => /connected_slaves:0/.test(info), 'info', 'replication');
    } finally {
      await master.stop();
    }
  });
});

describe.each([oursMemory, asyncMutex, rawMemory])('in-memory contender $id', (contender) => {
  test('50 concurrent callers: the counter comes out exact', async () => {
    const client = await contender.create(env);
    let counter = 0;
    try {
      await hammer(
        client,
        'one',
        50,
        4,
        async () => counter,
        async (v) => void (counter = v),
      );
    } finally {
      await client.close();
    }
    expect(counter).toBe(200);
  });

  test('a section that throws releases the lock for the next caller', async () => {
    const client = await contender.create(env);
    try {
      await expect(client.withLock('boom', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      await expect(client.withLock('boom', async () => 'next')).resolves.toBe('next');
    } finally {
      await client.close();
    }
  });
});

describe('table arithmetic', () => {
  test('sections waited: strict FIFO order counts callers - 1 for every caller; an overtaken caller counts more', () => {
    const fifo = new SectionOrder(3);
    for (let n = 0; n < 12; n++) fifo.entered(n % 3, n);
    expect(fifo.between).toEqual(new Array(9).fill(2));
    expect(fifo.max).toBe(2);
    const barging = new SectionOrder(3);
    [0, 1, 2, 0, 1, 0, 1, 0, 1, 2].forEach((caller, n) => barging.entered(caller, n));
    expect(barging.max).toBe(6); // caller 2: sections 2 and 9
  });

  test('median, quantile and spread', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(quantile([0, 10], 0.99)).toBeCloseTo(9.9);
    expect(spread([90, 100, 110])).toBeCloseTo(0.1);
    expect(spread([10, 100, 100, 100, 1000])).toBe(0);
  });

  test('ratios against the raw baseline and the best peer, and the best peer at default settings; the no-lock ceiling is never a base', () => {
    const subject = (id: string, kind: 'ours' | 'raw' | 'peer' | 'reference', retry: 'default' | 'tuned' | '-') => ({
      id,
      label: id,
      kind,
      retry,
      waits: '',
    });
    const rows = [
      buildRow('s3', 'v', subject('ours', 'ours', '-'), 'x/s', [
        { throughput: 300 },
        { throughput: 310 },
        { throughput: 290 },
      ]),
      buildRow('s3', 'v', subject('raw', 'raw', '-'), 'x/s', [{ throughput: 200 }]),
      buildRow('s3', 'v', subject('peer-default', 'peer', 'default'), 'x/s', [{ throughput: 100 }]),
      buildRow('s3', 'v', subject('peer-tuned', 'peer', 'tuned'), 'x/s', [{ throughput: 150 }]),
      buildRow('s3', 'v', subject('broken', 'peer', 'default'), 'x/s', [], 'provider missing'),
      buildRow('s3', 'v', subject('ceiling', 'reference', '-'), 'x/s', [{ throughput: 900 }]),
    ];
    addRatios(rows, true);
    const ours = rows[0]!;
    expect(ours.vsRaw).toBeCloseTo(1.5);
    expect(ours.vsBestPeer).toBeCloseTo(2);
    expect(ours.bestPeer).toBe('peer-tuned (tuned)');
    expect(ours.vsBestDefaultPeer).toBeCloseTo(3);
    expect(rows[2]!.vsBestPeer).toBeUndefined();
  });

  test("scenario 5's check compares the app's CPU per request under @Locked (redis) with @MurLock's, and is not measured without both", () => {
    const route = (id: string, kind: 'ours' | 'peer', cpuUsPerRequest: number) =>
      buildRow('s5', 'a new name per request', { id, label: id, kind, retry: '-', waits: '' }, 'req/s', [
        { throughput: 1000, cpuUsPerRequest },
      ]);
    const check = (rows: ReturnType<typeof route>[]) => targets(rows).find((t) => t.text.includes('÷ @MurLock'))!;
    const cheaper = check([route('http-distinct-redis', 'ours', 240), route('http-distinct-murlock', 'peer', 300)]);
    expect(cheaper).toMatchObject({ met: true, op: '<=', required: 1 });
    expect(cheaper.actual).toBeCloseTo(0.8);
    expect(check([route('http-distinct-redis', 'ours', 330), route('http-distinct-murlock', 'peer', 300)]).met).toBe(
      false,
    );
    expect(check([route('http-distinct-redis', 'ours', 240)]).met).toBeUndefined();
  });
});

describe("scenarios 3 and 6b's hand-off floor and the checks' digits", () => {
  test('a notice published through Redis is heard by another process; the bound is a turn of sections over the turn plus the floor', async () => {
    const floor = await handOffFloorUs(redisUrl);
    expect(Number.isFinite(floor)).toBe(true);
    expect(floor).toBeGreaterThan(0);
    // 10,000 sections/s: 100 µs each; a turn of 4 is 400 µs, then a 100 µs hand-off.
    expect(floorBound(10_000, 100, 4)).toBeCloseTo(0.8);
    expect(floorBound(10_000, 100, 6)).toBeCloseTo(600 / 700);
  }, 60_000);

  test('a notice sent through PostgreSQL (NOTIFY, committed) is heard by another process that LISTENs', async () => {
    const floor = await handOffFloorUs(POSTGRES_URL, 'postgres');
    expect(Number.isFinite(floor)).toBe(true);
    expect(floor).toBeGreaterThan(0);
  }, 60_000);

  test('a figure just past its bound is not printed as the bound', () => {
    const lines = targetLines([target('s3', 'few commands', 5.003, '<=', 5), target('s3', 'fast', 0.5, '>=', 0.75)]);
    expect(lines).toContain('[not met] 3. Contended: few commands: 5.003 (needs <= 5)');
    expect(lines).toContain('[not met] 3. Contended: fast: 0.50 (needs >= 0.75)');
  });
});

describe('growth scenarios at their smallest size', () => {
  const ctx: BenchContext = {
    env,
    options: { quick: true, repeats: 1, longRepeats: 1, runMs: 100, longRunMs: 100 },
    log: () => {},
  };

  test('many held locks (memory, 10): renewal renews every lock in batches (extendMany), no lock is lost, the heap per lock is measured', async () => {
    const t = await heldLocks(ctx, { sizes: [10], stores: ['memory'], windowMs: 1_500 });
    const raw = t.rows[0]!.raw;
    expect(raw.failed).toBeUndefined();
    expect(raw.batchCallsPerSecond).toBeGreaterThan(0);
    expect(raw.storeCallsPerSecond).toBe(raw.batchCallsPerSecond);
    expect(raw.renewalsPerSecond).toBeGreaterThan(Number(raw.storeCallsPerSecond));
    expect(raw.lost).toBe(0);
    expect(raw.extendFailures).toBe(0);
    expect(Number.isFinite(raw.heapPerLockBytes)).toBe(true);
  }, 60_000);

  test('what released names leave (redis, 20 names): at most their counters right after, nothing once the window has passed', async () => {
    const t = await leftoverKeys(ctx, { names: 20, at: [0, FENCE_GRACE_MS + 1_000] });
    const [now, later] = t.rows.map((r) => r.raw);
    expect(now).toMatchObject({ names: 20 });
    expect(now!.keys).toBeLessThanOrEqual(20);
    expect(now!.bytes).toBeLessThan(20 * 200);
    expect(later).toMatchObject({ keys: 0, bytes: 0, keysPerName: 0 });
  }, 60_000);

  test('many waiters (redis, 10): every waiter is served once, no sections overlap', async () => {
    const t = await manyWaiters(ctx, { sizes: [10], maxWaiters: 10 });
    expect(t.rows[0]!.raw).toMatchObject({ waiters: 10, served: 10, lost: 0, servedTwice: 0, overlaps: 0, errors: 0 });
  }, 60_000);

  test('hand-off arithmetic: a lost waiter, one served twice and an overlap are each counted', () => {
    const s = (id: number, pid: number, start: number, end: number) => ({ id, pid, start, end });
    const r = judge(4, 0, [s(0, 1, 1, 2), s(1, 2, 4, 6), s(1, 2, 5, 7), s(3, 1, 8, 9)]);
    expect(r).toMatchObject({ served: 3, lost: 1, twice: 1, overlaps: 1, totalMs: 9 });
    expect(r.handOffs).toEqual([1, 2, -1, 1]);
    expect(r.crossProcess).toEqual([1, 2, 1]);
  });
});

describe("scenario 4's OpenTelemetry rows", () => {
  test('each row runs in its own process: the plain row cannot load @opentelemetry/api, the two others load it; the ratio check is printed', async () => {
    const ctx: BenchContext = {
      env,
      options: { quick: true, repeats: 1, longRepeats: 1, runMs: 100, longRunMs: 100 },
      log: () => {},
    };
    // The pool fails a row whose process has the package loaded, or not, against its `openTelemetryApi`.
    const rows = await inMemory(ctx, [oursMemory, oursMemoryOtelIdle, oursMemoryOtelSdk]);
    expect(rows.map((r) => [r.id, r.skipped, r.samples.length])).toEqual(
      ['sequential', '100 concurrent'].flatMap(() =>
        [oursMemory.id, oursMemoryOtelIdle.id, oursMemoryOtelSdk.id].map((id) => [id, undefined, 1]),
      ),
    );
    for (const r of rows) expect(r.median.exact).toBe(1);
    const checks = targets(rows).filter((t) => t.text.includes('@opentelemetry/api installed and no SDK'));
    expect(checks).toHaveLength(2);
    for (const t of checks) expect(Number.isFinite(t.actual)).toBe(true);
  }, 90_000);
});

describe('semaphore and read/write scenarios at a tiny size (2 processes × 2 callers, one 300 ms run)', () => {
  const ctx: BenchContext = {
    env,
    options: { quick: true, repeats: 1, longRepeats: 1, runMs: 300, longRunMs: 300 },
    log: () => {},
  };
  const size = { processes: 2, callers: 2 };

  test('scenario 9: every contender ran, none had more than the limit inside, nest-lock and the no-lock ceiling reached it', async () => {
    const t = await semaphore(ctx, undefined, size);
    const raw = Object.fromEntries(t.rows.map((r) => [r.raw.id, r.raw]));
    expect(Object.keys(raw)).toEqual([
      'ours-redis-permits',
      'redis-semaphore-default',
      'redis-semaphore-tuned',
      'no-permit-ceiling',
      'permit-round-trip-floor',
    ]);
    for (const r of Object.values(raw)) {
      expect(r.skipped).toBeUndefined();
      expect(r.sections).toBeGreaterThan(0);
      expect(r.maxInside).toBeLessThanOrEqual(SEMAPHORE_LIMIT);
      expect(r.conflicts).toBe(0);
    }
    // 4 callers on 4 permits: each caller holds one whenever it asks.
    expect(raw['ours-redis-permits']!.maxInside).toBe(SEMAPHORE_LIMIT);
    expect(raw['no-permit-ceiling']!.maxInside).toBe(SEMAPHORE_LIMIT);
    // CPU per section, of the workers and of the redis-server, for every row.
    for (const r of Object.values(raw)) {
      expect(r.clientCpuUsPerSection).toBeGreaterThan(0);
      expect(r.redisCpuUsPerSection).toBeGreaterThan(0);
    }
    // The floor deals its 4 callers out over the 2 processes: all 4 run at once.
    expect(raw['permit-round-trip-floor']!.maxInside).toBe(SEMAPHORE_LIMIT);
    expect(t.notes.find((n) => n.startsWith('round trip a section:'))).toMatch(
      /× the ceiling.*nest-lock ran at \d\.\d\d× of it/,
    );
    expect(t.notes.find((n) => n.startsWith('checks:'))).toMatch(
      /≥ 0\.85× the ceiling: (met|not met).*≤ 2× strict FIFO: (met|not met).*≥ 0\.9× its share: (met|not met)/,
    );
  }, 90_000);

  test('scenario 10: shared reads and all-exclusive both ran with no conflict and exact writes; only shared reads overlap', async () => {
    const t = await readWrite(ctx, undefined, size);
    const raw = Object.fromEntries(t.rows.map((r) => [r.raw.id, r.raw]));
    for (const id of ['ours-redis-permits', 'ours-redis-exclusive-only']) {
      expect(raw[id]).toMatchObject({ conflicts: 0, exact: 1 });
      expect(raw[id]!.writes).toBeGreaterThan(0);
    }
    expect(raw['ours-redis-exclusive-only']!.maxInside).toBe(1);
    expect(raw['ours-redis-permits']!.maxInside).toBeGreaterThan(1);
  }, 90_000);
});
