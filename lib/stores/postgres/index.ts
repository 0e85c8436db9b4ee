export {
  PostgresLockProvider,
  DEFAULT_POSTGRES_LOCK_TABLE,
  POSTGRES_LOCK_SCHEMA_SQL,
  type PostgresLockProviderOptions,
  type PostgresConnection,
} from './postgres-lock.provider.js';
