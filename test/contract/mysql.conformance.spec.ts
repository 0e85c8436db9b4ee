import { describeOfferedConformance } from '../support/offered-conformance.js';
import { MysqlLockProvider } from '../../lib/stores/mysql/index.js';
import { MYSQL_URL, dropMysqlLockTables, uniqueMysqlTable } from '../support/mysql-test-env.js';
import { pausedHolderOn } from './paused-holder-process.js';

const table = uniqueMysqlTable('conf');

describeOfferedConformance(
  'MysqlLockProvider',
  () => ({
    provider: new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, commandTimeout: 3_000 }),
    peer: new MysqlLockProvider({ connection: MYSQL_URL, tableName: table, commandTimeout: 3_000 }),
    cleanup: () => dropMysqlLockTables(table),
  }),
  {
    limitAndShared: true,
    acquireMany: false,
    extendMany: true,
    pausedHolder: pausedHolderOn({ kind: 'mysql', connection: MYSQL_URL, tableName: table }),
  },
);
