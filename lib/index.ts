export { LockModule } from './nest/lock.module.js';
export { LOCK_MODULE_OPTIONS, type LockModuleExtras, type LockOptionsFactory } from './nest/lock.module-definition.js';
export { LockService } from './nest/lock.service.js';
export {
  Locked,
  type LockContextNameFactory,
  type LockedOptions,
  type LockNameFactory,
} from './nest/locked.decorator.js';
export {
  LockExceptionFilter,
  LOCK_EXCEPTION_FILTER_OPTIONS,
  type LockExceptionFilterOptions,
  type LockErrorBody,
} from './nest/lock-exception.filter.js';
export type { LockErrorPayload } from './nest/lock-error-payload.js';
export type { JobDelay } from './nest/delayed-job.js';
export {
  LockProvider,
  lockHolder,
  type LockAcquireRequest,
  type LockGrant,
  type LockHolder,
  type LockStoreSetup,
  type MaybePromise,
} from './contract/lock-provider.js';
export { InMemoryLockProvider, type InMemoryHoldOptions } from './stores/memory/index.js';
export { createLockProvider } from './stores/lock-provider.factory.js';
export {
  DEFAULT_TTL,
  DEFAULT_KEY_PREFIX,
  DEFAULT_COMMAND_TIMEOUT,
  MAX_DURATION_MS,
  MAX_LOCK_NAME_LENGTH,
  MAX_KEY_PREFIX_LENGTH,
} from './contract/lock.constants.js';
export { LockManager, type LockManagerOptions } from './engine/lock-manager.js';
export type { LockHandle } from './engine/lock-handle.interface.js';
export { currentLock } from './engine/lock-context.js';
export type { LockCallOptions, LockMode, OnHeld } from './contract/lock-options.interface.js';
export type { LockModuleOptions } from './nest/lock-module-options.interface.js';
export type { LockStoreOptions } from './stores/lock-store-options.interface.js';
export type { LockEvent, LockEventType, LeadershipEndReason, LockOutcome } from './contract/lock-events.interface.js';
export type { LockTelemetryOptions } from './telemetry/lock-telemetry-options.interface.js';
export type { InspectedLock, LockInspectOptions, LockInspection } from './inspection/inspected-lock.interface.js';
export type { LockInspectPage, LockInspectRequest, StoredLock } from './contract/stored-lock.interface.js';
export { LOCK_METRICS, LOCK_ATTRIBUTES, OTHER_LOCK_NAME } from './telemetry/telemetry-names.js';
export type { LockLogger } from './contract/lock-logger.interface.js';
export {
  LockError,
  LockAcquireError,
  LockStoreError,
  LockLostError,
  LockReentryError,
  LockOptionsError,
  LockJobDelayedError,
} from './errors/lock.errors.js';
export { LeaderElection, type LeaderElectionOptions } from './leader/leader-election.js';
export { defaultInstanceId } from './engine/default-instance-id.js';
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
export { LeaderService } from './nest/leader.service.js';
export type { LockBatchRequest, LockExtension } from './contract/lock-provider.js';
export type {
  LockProviderCapabilities,
  LockAcquireCapabilities,
  LockGrantCapabilities,
} from './contract/lock-provider-capabilities.js';
