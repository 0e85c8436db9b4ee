import type { LockProvider } from '../contract/lock-provider.js';
import type { LockEvent } from '../contract/lock-events.interface.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import type { OnHeld } from '../contract/lock-options.interface.js';
import type { LockTelemetryOptions } from '../telemetry/lock-telemetry-options.interface.js';

/**
 * Settings of a {@link LockManager}: the store, and the defaults of every
 * call. `LockModule.forRoot()` takes the same defaults.
 */
export interface LockManagerOptions {
  /** The store. */
  provider: LockProvider;
  /** Where to log (lost locks, store failures, held locks at debug). Default: nowhere. */
  logger?: LockLogger;
  /** Prefix of every store key, so lock keys never collide with the app's own. Default `'lock:'`. */
  keyPrefix?: string;
  /** Default lease in ms. Default `30000`. */
  ttl?: number;
  /** Default policy when a lock is held. Default `'throw'` (scheduled tasks default to `'skip'`). */
  onHeld?: OnHeld;
  /** Default longest wait in ms for `onHeld: 'wait'`. Default: unbounded. */
  waitTimeout?: number;
  /** Default for lease renewal while the holder runs. Default `true`. */
  renew?: boolean;
  /** Default cap in ms on how long renewal may keep a lock. Default: none. */
  maxHold?: number;
  /**
   * Pass a released lock of a shared store to this process's own waiters
   * (those that queued before it was granted, then newer ones up to half as
   * many sections again; at most 15 per grant), without a store round trip;
   * `false`: every waiter queues at the store. Default `true`.
   * See docs/engine.md, "Local hand-off".
   */
  localHandOff?: boolean;
  /**
   * This replica's id, as other replicas see it: the holder of every lock it
   * takes in `inspect()`, and the leader of a name. Default `<hostname>:<pid>`.
   */
  instanceId?: string;
  /** Called for every lock event (acquired, released, contended, ...). Must not throw; errors are logged and ignored. */
  onEvent?: (event: LockEvent) => void;
  /**
   * OpenTelemetry metrics and spans (optional peer `@opentelemetry/api`).
   * Default `'auto'`: on when the package is installed and an SDK is
   * registered at start, else off at no cost. `true` or options: on. `false`: off.
   */
  telemetry?: boolean | 'auto' | LockTelemetryOptions;
}
