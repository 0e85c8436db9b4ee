/**
 * Several processes, each a Nest application context with
 * LockModule.forRoot({ postgres }), against the real PostgreSQL.
 */
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';
import { startWorker, type Worker } from './spawn-worker.js';
import { runCounterWorkers, workerSections, expectSerialSections } from '../../support/counter-workers.js';
import { expectKilledHolderFreedByLease } from '../../support/freed-by-lease.js';

describe('PostgreSQL provider across processes', () => {
  const table = uniqueTable('mp');
  const workers: Worker[] = [];

  beforeAll(async () => {
    await sql(`CREATE TABLE "${table}_counter" (id int PRIMARY KEY, n int NOT NULL)`);
    await sql(`INSERT INTO "${table}_counter" VALUES (1, 0)`);
    await sql(`CREATE TABLE "${table}_ticks" (second bigint NOT NULL, pid int NOT NULL)`);
  });
  afterEach(() => {
    for (const w of workers.splice(0)) w.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await sql(`DROP TABLE IF EXISTS "${table}_counter", "${table}_ticks"`);
    await dropLockTables(table);
  });

  test('mutual exclusion: 4 processes × 2 callers × 75 sections, exact counter, no overlap, fencing tokens increase in entry order', async () => {
    const perWorker = 150;
    const codes = await runCounterWorkers(workers, 4, 20_000, () =>
      startWorker('mutex', table, { SECTIONS: String(perWorker), CONCURRENCY: '2' }),
    );
    expect(codes).toEqual([0, 0, 0, 0]);

    const sections = workerSections(workers);
    expect(sections).toHaveLength(4 * perWorker);
    const [{ n }] = await sql<{ n: number }>(`SELECT n FROM "${table}_counter" WHERE id = 1`);
    expect(n).toBe(4 * perWorker);
    expectSerialSections(sections);
    // FIFO across processes: a process runs the batch of its own waiters (local hand-offs: the next token of
    // its grant's block), then queues behind the others, so turns interleave instead of one process taking the
    // lock again and again. Counted while every process still had sections to run.
    const own = [...new Set(sections.map((s) => s.pid))].map((pid) => sections.filter((s) => s.pid === pid));
    expect(own).toHaveLength(4);
    const from = Math.max(...own.map((o) => o[0].enter));
    const until = Math.min(...own.map((o) => o.at(-1)!.enter));
    let run = 1;
    let longestRun = 1;
    let local = 0;
    for (let i = 1; i < sections.length; i++) {
      if (sections[i].enter <= from || sections[i].enter >= until) continue;
      const same = sections[i].pid === sections[i - 1].pid;
      if (same && sections[i].token === sections[i - 1].token + 1) local++;
      run = same ? run + 1 : 1;
      longestRun = Math.max(longestRun, run);
    }
    expect(local).toBeGreaterThan(0);
    expect(longestRun).toBeLessThanOrEqual(4);
  }, 90_000);

  test('a holder killed with SIGKILL frees the lock after its lease, and not before', async () => {
    const ttl = 3_000;
    const holder = startWorker('hold', table, { TTL: String(ttl) });
    workers.push(holder);
    await expectKilledHolderFreedByLease(
      holder,
      ttl,
      () => new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    );
  }, 40_000);

  test('@Cron("* * * * * *") + @Locked on 3 processes runs each tick once', async () => {
    for (let i = 0; i < 3; i++) workers.push(startWorker('cron', table));
    await Promise.all(workers.map((w) => w.ready(20_000)));
    const until = Date.now() + 5_500;
    for (const w of workers) w.child.send(String(until));
    const codes = await Promise.all(workers.map((w) => w.exited));
    expect(codes).toEqual([0, 0, 0]);
    const rows = await sql<{ second: string; runs: number; pids: number }>(
      `SELECT second, count(*)::int AS runs, count(DISTINCT pid)::int AS pids FROM "${table}_ticks" GROUP BY second ORDER BY second`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) expect({ second: row.second, runs: row.runs }).toEqual({ second: row.second, runs: 1 });
  }, 40_000);
});
