/**
 * Scheduled tasks on several processes sharing one Redis: each tick runs once,
 * the replicas that skip log nothing at error level, and holdAtLeast protects
 * against replicas whose ticks fire a little late.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { compiledScript } from '../../support/paths.js';

const REDIS_URL = 'redis://127.0.0.1:6379';

interface Worker {
  child: ChildProcess;
  lines: string[];
  ready: Promise<void>;
  exited: Promise<number | null>;
}

function startWorker(args: Record<string, unknown>): Worker {
  const child = spawn(
    process.execPath,
    [compiledScript(new URL('./fixtures/schedule-worker.js', import.meta.url)), JSON.stringify(args)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines: string[] = [];
  let markReady: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    if (line === 'ready') markReady();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, lines, ready, exited };
}

async function runWorkers(
  count: number,
  args: (i: number) => Record<string, unknown>,
): Promise<{ ticks: string[]; errors: string[] }> {
  const runId = `sched-test:${randomBytes(6).toString('hex')}`;
  const workers = Array.from({ length: count }, (_, i) => startWorker({ url: REDIS_URL, runId, ...args(i) }));
  try {
    const codes = await Promise.all(workers.map((w) => w.exited));
    expect(codes).toEqual(workers.map(() => 0));
  } finally {
    for (const w of workers) w.child.kill('SIGKILL');
  }
  const redis = new Redis(REDIS_URL);
  try {
    const ticks = await redis.lrange(`${runId}:ticks`, 0, -1);
    await redis.del(`${runId}:ticks`);
    const errors = workers.flatMap((w) => w.lines.filter((l) => l.startsWith('ERRORLOG')));
    return { ticks, errors };
  } finally {
    await redis.quit();
  }
}

/** tick -> how many times it ran; leaves out the first and last second, when not every replica was up. */
function runsPerTick(ticks: string[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const t of ticks) {
    const tick = Number(t.split('|')[0]);
    counts.set(tick, (counts.get(tick) ?? 0) + 1);
  }
  return counts;
}

describe('@Locked scheduled tasks on 3 processes (Redis)', () => {
  test.each(['cron-above', 'cron-below'])(
    '%s: every @Cron tick runs exactly once across processes, and no process logs an error',
    async (mode) => {
      const { ticks, errors } = await runWorkers(3, () => ({ mode, runMs: 6_000 }));
      expect(errors).toEqual([]);
      const counts = runsPerTick(ticks);
      expect(counts.size).toBeGreaterThanOrEqual(4);
      for (const [tick, n] of counts) expect([tick, n]).toEqual([tick, 1]);
      const pids = new Set(ticks.map((t) => t.split('|')[1]));
      expect(pids.size).toBeGreaterThanOrEqual(1);
      const tokens = ticks.map((t) => Number(t.split('|')[2]));
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    },
    90_000,
  );

  test('@Interval: runs never overlap across processes and happen about once per period', async () => {
    const { ticks, errors } = await runWorkers(3, () => ({ mode: 'interval', runMs: 6_000 }));
    expect(errors).toEqual([]);
    const spans = ticks.map((t) => t.split('|')[0].split('-').map(Number)).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
    // 3 processes x ~5 ticks each would be ~15 runs without the lock; holdAtLeast 900 ms lets about one per second through.
    expect(spans.length).toBeGreaterThanOrEqual(3);
    expect(spans.length).toBeLessThanOrEqual(9);
  }, 90_000);

  test('holdAtLeast: replicas whose ticks fire up to 300 ms apart run each tick once with it, and more than once without it', async () => {
    const offsets = [0, 150, 300];
    const withHold = await runWorkers(3, (i) => ({
      mode: 'skew',
      runMs: 5_000,
      offsetMs: offsets[i],
      holdAtLeast: 800,
    }));
    expect(withHold.errors).toEqual([]);
    const once = runsPerTick(withHold.ticks);
    expect(once.size).toBeGreaterThanOrEqual(3);
    for (const [tick, n] of once) expect([tick, n]).toEqual([tick, 1]);

    const without = await runWorkers(3, (i) => ({ mode: 'skew', runMs: 5_000, offsetMs: offsets[i], holdAtLeast: 0 }));
    expect(without.errors).toEqual([]);
    const counts = [...runsPerTick(without.ticks).values()];
    expect(counts.some((n) => n > 1)).toBe(true);
  }, 120_000); // two rounds of three Nest processes: their start-up alone took over 10 s on a loaded machine
});
