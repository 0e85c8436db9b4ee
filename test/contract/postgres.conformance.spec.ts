import { describeOfferedConformance } from '../support/offered-conformance.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { POSTGRES_URL, dropLockTables, uniqueTable } from '../support/pg-test-env.js';
import { pausedHolderOn } from './paused-holder-process.js';

const table = uniqueTable('conf');

describeOfferedConformance(
  'PostgresLockProvider',
  () => ({
    provider: new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    peer: new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    cleanup: () => dropLockTables(table),
  }),
  {
    acquireMany: false,
    pausedHolder: pausedHolderOn({ kind: 'postgres', connection: POSTGRES_URL, tableName: table }),
  },
);
