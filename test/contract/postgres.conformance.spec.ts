import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { describeLockProviderConformance } from './lock-provider.conformance.js';
import { POSTGRES_URL, dropLockTables, uniqueTable } from '../support/pg-test-env.js';

const table = uniqueTable('conf');

describeLockProviderConformance(
  'PostgresLockProvider',
  async () => ({
    provider: new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    peer: new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    cleanup: () => dropLockTables(table),
    child: { kind: 'postgres', connection: POSTGRES_URL, tableName: table },
  }),
  { acquireMany: false },
);
