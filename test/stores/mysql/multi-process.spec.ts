/**
 * Several processes, each a Nest application context with
 * LockModule.forRoot({ mysql }), against the real MariaDB / MySQL.
 */
import { MysqlLockProvider } from '../../../lib/stores/mysql/index.js';
import { compiledScript } from '../../support/paths.js';
import { dropMysqlLockTables, MYSQL_URL, mysqlQuery, uniqueMysqlTable } from '../../support/mysql-test-env.js';
import { runCounterWorkers, workerSections, expectSerialSections } from '../../support/counter-workers.js';
import { expectKilledHolderFreedByLease } from '../../support/freed-by-lease.js';
import { startWorkerProcess, type Worker } from '../../support/worker-process.js';

const startWorker = (mode: string, table: string, env: Record<string, string> = {}): Worker =>
  startWorkerProcess(compiledScript(new URL('./fixtures/mysql-worker.js', import.meta.url)), mode, {
    MYSQL_URL,
    MYSQL_TABLE: table,
    ...env,
  });

describe('MySQL provider across processes', () => {
  const table = uniqueMysqlTable('mp');
  const workers: Worker[] = [];

  beforeAll(async () => {
    await mysqlQuery(`CREATE TABLE \`${table}_counter\` (id INT PRIMARY KEY, n INT NOT NULL)`);
    await mysqlQuery(`INSERT INTO \`${table}_counter\` VALUES (1, 0)`);
  });
  afterEach(() => {
    for (const w of workers.splice(0)) w.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await mysqlQuery(`DROP TABLE IF EXISTS \`${table}_counter\``);
    await dropMysqlLockTables(table);
  });

  test('mutual exclusion: 4 processes × 2 callers × 40 sections on one lock: exact counter, no overlap, fencing tokens increase in entry order', async () => {
    const perWorker = 40;
    const codes = await runCounterWorkers(workers, 4, 30_000, () =>
      startWorker('mutex', table, { SECTIONS: String(perWorker), CONCURRENCY: '2' }),
    );
    expect({ codes, stderr: workers.map((w) => w.stderr()).join('') }).toEqual({ codes: [0, 0, 0, 0], stderr: '' });

    const sections = workerSections(workers);
    expect(sections).toHaveLength(4 * perWorker);
    const [{ n }] = await mysqlQuery<Array<{ n: number }>>(`SELECT n FROM \`${table}_counter\` WHERE id = 1`);
    expect(n).toBe(4 * perWorker);
    expectSerialSections(sections);
    // Every process had turns (FIFO across processes), not one process again and again.
    expect(new Set(sections.slice(0, sections.length / 2).map((s) => s.pid)).size).toBe(4);
  }, 120_000);

  test('a holder killed with SIGKILL frees the lock after its lease, and not before', async () => {
    const ttl = 3_000;
    const holder = startWorker('hold', table, { TTL: String(ttl) });
    workers.push(holder);
    await expectKilledHolderFreedByLease(
      holder,
      ttl,
      () => new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, commandTimeout: 3_000 }),
      30_000,
    );
  }, 60_000);
});
