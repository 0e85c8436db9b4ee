export { LockModule } from './lock.module.js';
export { LOCK_MODULE_OPTIONS, type LockModuleExtras, type LockOptionsFactory } from './lock.module-definition.js';
export { LockService } from './lock.service.js';
export { Locked, type LockedOptions, type LockNameFactory } from './locked.decorator.js';
export {
  LockExceptionFilter,
  LOCK_EXCEPTION_FILTER_OPTIONS,
  type LockExceptionFilterOptions,
  type LockErrorBody,
} from './lock-exception.filter.js';
export { LockProvider, lockHolder, type LockAcquireRequest, type LockGrant, type LockHolder, type MaybePromise } from './lock-provider.interface.js';
export { InMemoryLockProvider } from './providers/in-memory-lock.provider.js';
export { RedisLockProvider, DEFAULT_COMMAND_TIMEOUT, type RedisLockProviderOptions, type RedisConnection } from './providers/redis-lock.provider.js';
export {
  PostgresLockProvider,
  DEFAULT_POSTGRES_LOCK_TABLE,
  DEFAULT_POSTGRES_COMMAND_TIMEOUT,
  POSTGRES_LOCK_SCHEMA_SQL,
  type PostgresLockProviderOptions,
  type PostgresConnection,
} from './providers/postgres-lock.provider.js';
export { createLockProvider } from './providers/lock-provider.factory.js';
export { LockManager, DEFAULT_TTL, DEFAULT_KEY_PREFIX, type LockManagerOptions } from './lock-manager.js';
export type { LockHandle } from './lock-handle.js';
export { currentLock } from './lock.context.js';
export type { LockCallOptions, LockModuleOptions, OnHeld } from './lock-options.interface.js';
export type { LockEvent, LockEventType, LeadershipEndReason, LockOutcome } from './lock-events.interface.js';
export type { LockTelemetryOptions } from './telemetry/lock-telemetry-options.interface.js';
export type { InspectedLock, LockInspectOptions, LockInspection } from './inspection/inspected-lock.interface.js';
export type { LockInspectPage, LockInspectRequest, StoredLock } from './inspection/lock-inspection.interface.js';
export { LOCK_METRICS, LOCK_ATTRIBUTES, OTHER_LOCK_NAME } from './telemetry/telemetry-names.js';
export type { LockLogger } from './lock-logger.interface.js';
export { LockError, LockAcquireError, LockStoreError, LockLostError, LockReentryError, LockOptionsError } from './lock.errors.js';
export { LeaderElection, defaultInstanceId, type LeaderElectionOptions } from './leader/leader-election.js';
export type { Campaign } from './leader/leader-campaign.js';
export type { Leadership } from './leader/leadership.js';
export {
  DEFAULT_LEADER_TTL,
  DEFAULT_LEADER_RETRY_DELAY,
  type LeaderOptions,
  type CampaignOptions,
  type LeaderInfo,
} from './leader/leader-options.interface.js';
export { Leader } from './leader/leader.decorator.js';
export { LeaderService } from './leader/leader.service.js';
