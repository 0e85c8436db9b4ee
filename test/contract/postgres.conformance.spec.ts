import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import { POSTGRES_URL, dropLockTables, uniqueTable } from '../support/pg-test-env.js';
import { pausedHolderOn } from './paused-holder-process.js';

const table = uniqueTable('conf');

describeLockProviderConformance(
  'PostgresLockProvider',
  () => ({
    provider: new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    peer: new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table, commandTimeout: 3_000 }),
    cleanup: () => dropLockTables(table),
  }),
  { describe, it, beforeAll, afterAll },
  { acquireMany: false, pausedHolder: pausedHolderOn({ kind: 'postgres', connection: POSTGRES_URL, tableName: table }) },
);
