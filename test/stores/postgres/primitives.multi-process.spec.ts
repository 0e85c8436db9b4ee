/**
 * Semaphores, read/write locks and several names at once across processes
 * on PostgreSQL: 3 children, each a LockManager on its own pool, with the
 * checks of test/support/primitives-check.ts.
 */
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';
import { primitivesAcrossProcesses } from '../../support/primitives-check.js';

const table = uniqueTable('mpp');

beforeAll(async () => {
  await sql(`CREATE TABLE "${table}_ledger" (key text PRIMARY KEY, n bigint NOT NULL)`);
});
afterAll(async () => {
  await sql(`DROP TABLE IF EXISTS "${table}_ledger"`);
  await dropLockTables(table);
});

describe('PostgreSQL: semaphores, read/write locks and several names across processes', () => {
  primitivesAcrossProcesses({
    fixture: new URL('./fixtures/primitives-worker.js', import.meta.url),
    args: { url: POSTGRES_URL, table },
    namespace: 'mpp:',
    counter: async (key) =>
      Number((await sql<{ n: string }>(`SELECT n FROM "${table}_ledger" WHERE key = $1`, [`mpp:${key}`]))[0]?.n ?? 0),
  });
});
