import {
  heldMessage,
  jobDelayedMessage,
  lostMessage,
  reentryMessage,
  storeFailedMessage,
  waitTimeoutMessage,
} from './lock.messages.js';

/**
 * The base class of every error this library throws. Catch `LockError` to
 * handle all of them; catch a subclass to handle one case.
 *
 * @example
 * ```ts
 * try {
 *   await locks.withLock('payouts', run);
 * } catch (err) {
 *   if (err instanceof LockAcquireError) return 'busy, try later';
 *   throw err;
 * }
 * ```
 */
export class LockError extends Error {
  /** The lock's name (without the key prefix), when the error concerns one lock. */
  declare readonly lockName?: string;

  constructor(message: string, options?: { lockName?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    // Set only when there is one: a logged error shows no `lockName: undefined`.
    if (options?.lockName !== undefined) (this as { lockName?: string }).lockName = options.lockName;
  }
}

/**
 * The lock is held by another caller (`onHeld: 'throw'`), or a wait for it
 * ran out (`onHeld: 'wait'` with `waitTimeout`). In an HTTP handler it
 * surfaces as a 500 unless {@link LockExceptionFilter} maps it to 409.
 */
export class LockAcquireError extends LockError {
  /** `'held'`: held and not waited for; `'timeout'`: waited `waitTimeout` ms in vain. */
  readonly reason: 'held' | 'timeout';
  /** How long the caller waited, in ms (0 when it did not wait). */
  readonly waitedMs: number;

  constructor(lockName: string, reason: 'held' | 'timeout', waitedMs = 0) {
    super(reason === 'held' ? heldMessage(lockName) : waitTimeoutMessage(lockName, waitedMs), { lockName });
    this.reason = reason;
    this.waitedMs = waitedMs;
  }
}

/**
 * The lock store failed: it refused the connection, did not answer within the
 * command timeout, or answered with an error. `cause` is the last error the
 * client saw (a refused connection, an unknown host, a rejected password),
 * and the message says it in a few words. This is never "someone else
 * holds the lock": the state of the lock is unknown. {@link LockExceptionFilter}
 * maps it to 503.
 */
export class LockStoreError extends LockError {
  /** The operation that failed: `acquire`, `release`, `extend`, `ping`, ... */
  readonly operation: string;
  /** What the store said, without the lock name. */
  readonly detail: string;

  constructor(operation: string, detail: string, options?: { lockName?: string; cause?: unknown }) {
    super(storeFailedMessage(operation, options?.lockName, detail), options);
    this.operation = operation;
    this.detail = detail;
  }
}

/**
 * Thrown by a `@Locked` BullMQ processor with `jobDelay` whose lock is held,
 * after the job was moved back to delayed. Its `name` is `DelayedError`,
 * which BullMQ's worker recognizes: the job is neither failed nor retried
 * as a failure; it runs again when its delay ends.
 */
export class LockJobDelayedError extends LockError {
  /** How long the job was delayed, in ms. */
  readonly delayMs: number;

  constructor(lockName: string, delayMs: number) {
    super(jobDelayedMessage(lockName, delayMs), { lockName });
    this.name = 'DelayedError';
    this.delayMs = delayMs;
  }
}

/**
 * The lease of a held lock was lost: renewal failed for longer than the lease,
 * another owner took the key over, or `maxHold` ran out. It is the `reason` of
 * the handle's aborted `signal`; work protected by the lock should stop.
 */
export class LockLostError extends LockError {
  constructor(lockName: string, detail: string) {
    super(lostMessage(lockName, detail), { lockName });
  }
}

/**
 * The same lock name was requested again inside a call chain that already
 * holds it. Without `reentrant: true` this would wait on itself until the
 * lease expired, so it fails at once instead.
 */
export class LockReentryError extends LockError {
  constructor(lockName: string) {
    super(reentryMessage(lockName), { lockName });
  }
}

/**
 * An option, a lock name or a decorator use is invalid. Thrown at decoration
 * or module-init time where possible, and always before the protected code runs.
 */
export class LockOptionsError extends LockError {}
