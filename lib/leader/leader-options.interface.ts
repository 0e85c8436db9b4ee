import type { Leadership } from './leadership.js';

/** Default leadership lease, in ms: how long a crashed leader keeps the name before another replica takes over. */
export const DEFAULT_LEADER_TTL = 15_000;
/** Default pause, in ms, before a replica campaigns again after its leadership ended or the store failed. */
export const DEFAULT_LEADER_RETRY_DELAY = 1_000;
/** The lock name a leader name is kept under (so `@Leader('x')` and `@Locked('x')` never collide). */
export const LEADER_LOCK_PREFIX = 'leader:';

/** Options of `@Leader()` and `LeaderService.campaign()`. */
export interface LeaderOptions {
  /**
   * Leadership lease in ms, renewed every third of it while this replica
   * lives. A leader that cannot renew steps down (its `signal` aborts) when
   * three quarters of the lease have passed since its last renewal, so
   * before the store can give the name to another replica. A leader that
   * crashes keeps the name at most this long. Default `15000`.
   */
  ttl?: number;
  /**
   * Pause in ms before this replica campaigns again after its leadership
   * ended (lost, resigned, or the method returned or threw) or a store call
   * of the campaign failed. A method that returns at once therefore runs at
   * most once per `retryDelay` on a replica. Default `1000`.
   */
  retryDelay?: number;
  /**
   * This replica's id for this name, as other replicas see it through
   * `LeaderService.leader()`. Default: the module's `instanceId`
   * (`<hostname>:<pid>`).
   */
  instanceId?: string;
}

/** Options of `LeaderService.campaign()` (the engine's `LeaderElection.campaign()`). */
export interface CampaignOptions extends LeaderOptions {
  /**
   * Called on this replica each time it becomes the leader, with the
   * leadership. Leadership is given up when the returned promise settles
   * (see `retryDelay`); the next term starts only after it settled. Without
   * it, this replica leads until it loses or resigns (`Leadership.resign()`).
   */
  run?: (leadership: Leadership) => unknown;
}

/** The current leader of a name, as the store tells it (`LeaderService.leader()`). */
export interface LeaderInfo {
  /** The leader name. */
  readonly name: string;
  /** The leader's instance id; `undefined` when the holder did not name one (not a leader campaign). */
  readonly instanceId: string | undefined;
  /** `true` when this replica is the leader. */
  readonly self: boolean;
  /** What is left of the leader's lease on the store, in ms. */
  readonly remainingMs: number;
}
