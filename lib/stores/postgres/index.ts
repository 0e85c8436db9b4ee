export { PostgresLockProvider } from './postgres-lock.provider.js';
export { DEFAULT_POSTGRES_LOCK_TABLE, POSTGRES_LOCK_SCHEMA_SQL } from './postgres-lock-schema.sql.js';
export type { PostgresLockProviderOptions, PostgresLockPruneOptions, PostgresConnection } from './postgres-lock-options.interface.js';
