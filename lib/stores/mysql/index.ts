export { MysqlLockProvider } from './mysql-lock.provider.js';
export { DEFAULT_MYSQL_LOCK_TABLE } from './mysql-lock-tables.js';
export type {
  MysqlLockProviderOptions,
  MysqlLockPruneOptions,
  MysqlConnection,
} from './mysql-lock-options.interface.js';
