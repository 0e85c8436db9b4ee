export { PostgresLockProvider } from './postgres-lock.provider.js';
export { DEFAULT_POSTGRES_LOCK_TABLE } from './postgres-lock-tables.js';
export { POSTGRES_LOCK_SCHEMA_SQL } from './postgres-lock-schema.js';
export type {
  PostgresLockProviderOptions,
  PostgresLockPruneOptions,
  PostgresConnection,
} from './postgres-lock-options.interface.js';
