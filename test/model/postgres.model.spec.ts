import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { POSTGRES_URL, dropLockTables, uniqueTable } from '../support/pg-test-env.js';
import { modelTest } from './lock-model.js';

const table = uniqueTable('model');
// Three instances: each provider has its own pool and LISTEN connection.
const providers = [0, 1, 2].map(
  () => new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
);
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await dropLockTables(table);
});

modelTest({
  label: 'PostgresLockProvider, three instances',
  providers,
  timing: { shortLease: 600, fresh: 150, waitTimeout: 100 },
  runs: 15,
});
