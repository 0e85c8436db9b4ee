import type { HeldLock } from './held-lock.js';
import type { LockEntry } from './lock-context.js';
import type { LockRequest } from './lock-request.js';
import { LogWindow } from './lock-log-window.js';
import { LockAcquireError, LockStoreError } from '../errors/lock.errors.js';
import { heldSkippedLog, heldSummaryLog, heldThrownLog, storeFailuresSummaryLog } from '../errors/lock.messages.js';
import type { LockEvent, LockOutcome } from '../contract/lock-events.interface.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import { andThen, type MaybePromise } from '../contract/maybe-promise.js';
import { now } from '../shared/clock.js';

/** How often repeated log lines (a held lock, a store failure of the same cause) are summarized, in ms. @internal */
export const LOG_INTERVAL_MS = 60_000;

/** What a store failure is keyed by in a log window: its cause, without the lock or key it hit. @internal */
export function storeFailureKey(error: unknown): string {
  const detail =
    error instanceof LockStoreError ? error.detail : error instanceof Error ? error.message : String(error);
  return detail.replace(/ \(key ".*$/s, '');
}

/**
 * How calls for locks end, as callers, listeners and the log see it: the
 * `waiting`/`answered` events of a call, the `onHeld` policy for a lock held
 * elsewhere, wait failures, and logs of repeated outcomes kept to one line
 * per interval. @internal
 */
export class LockOutcomes {
  /** A held lock is a normal outcome: one debug line per name and interval, then a count. */
  private readonly heldSkips = new LogWindow(LOG_INTERVAL_MS, (name, n, s) =>
    this.logger.debug(heldSummaryLog(name, 'skipped', n, s)),
  );
  private readonly heldThrows = new LogWindow(LOG_INTERVAL_MS, (name, n, s) =>
    this.logger.debug(heldSummaryLog(name, 'refused', n, s)),
  );
  /** Store failures: one line per cause and interval, then a count. */
  private readonly storeFailures = new LogWindow(LOG_INTERVAL_MS, (key, n, s) =>
    this.logger.warn(storeFailuresSummaryLog(key.slice(key.indexOf(' ') + 1), n, s)),
  );

  /** `events`: where events go, and whether anyone listens (an event is built only then). */
  constructor(
    private readonly logger: LockLogger,
    private readonly events: { readonly observed: boolean; emit(event: LockEvent): void },
  ) {}

  /**
   * Logs a store failure at `level`, once per cause and interval: while the
   * store is down, the repeats are counted and summarized once a minute.
   */
  logStoreFailure(level: 'warn' | 'error', error: unknown, line: string): void {
    if (this.storeFailures.first(`${level}: ${storeFailureKey(error)}`)) this.logger[level](line);
  }

  /**
   * `take`, observed: a `waiting` event before a call that may wait, and an
   * `answered` event with its outcome after it, both in the caller's async
   * context (so telemetry sees the caller's active span).
   */
  watch<R>(
    req: LockRequest,
    take: () => MaybePromise<HeldLock | null>,
    then: (lock: HeldLock | null) => MaybePromise<R>,
  ): MaybePromise<R> {
    const started = now();
    if (req.wait) this.events.emit({ type: 'waiting', name: req.name, label: req.options.label });
    let lock: MaybePromise<HeldLock | null>;
    try {
      lock = take();
    } catch (err) {
      this.answer(req, started, null, err);
      throw err;
    }
    return andThen(
      lock,
      (l) => {
        this.answer(req, started, l);
        return then(l);
      },
      (err: unknown) => {
        this.answer(req, started, null, err);
        throw err;
      },
    );
  }

  /**
   * `takeMany`, observed: when it took the names, each gets the `waiting`
   * (for a wait) and `answered` events a single call that was granted at
   * once would; a refusal (the names are then taken one by one, with their
   * own events) or a path not taken emits nothing; a failure, `answered`
   * per name.
   */
  watchMany(
    reqs: readonly LockRequest[],
    take: () => MaybePromise<HeldLock[] | null> | undefined,
  ): MaybePromise<HeldLock[] | null> | undefined {
    const started = now();
    const answered = (locks: HeldLock[] | null | undefined, error?: unknown): void => {
      if (!locks && error === undefined) return;
      reqs.forEach((req, i) => {
        if (req.wait) this.events.emit({ type: 'waiting', name: req.name, label: req.options.label });
        this.answer(req, started, locks?.[i] ?? null, error);
      });
    };
    let locks: MaybePromise<HeldLock[] | null> | undefined;
    try {
      locks = take();
    } catch (err) {
      throw (answered(undefined, err), err);
    }
    if (locks === undefined) return undefined;
    return andThen(
      locks,
      (l) => (answered(l), l),
      (err: unknown) => {
        throw (answered(undefined, err), err);
      },
    );
  }

  /** A scoped call's entry once the store answered: the lock, or the `onHeld` policy for a lock held elsewhere. */
  entered(req: LockRequest, started: number, lock: HeldLock | null): LockEntry | undefined {
    if (lock) return lock;
    const { name, options } = req;
    if (options.onHeld === 'wait') throw this.waitFailed(req, started);
    const observed = this.events.observed;
    if (observed) this.events.emit({ type: 'contended', name, onHeld: options.onHeld });
    if (options.onHeld === 'skip') {
      if (this.heldSkips.first(name)) this.logger.debug(heldSkippedLog(name));
      if (observed) this.events.emit({ type: 'skipped', name, reason: 'held' });
      return undefined;
    }
    if (this.heldThrows.first(name)) this.logger.debug(heldThrownLog(name));
    throw new LockAcquireError(name, 'held');
  }

  /** The error of a wait that ended without the lock: the signal's reason, or a timeout. */
  waitFailed(req: LockRequest, started: number): Error {
    const { name, options } = req;
    if (options.signal?.aborted) {
      const reason: unknown = options.signal.reason;
      return reason instanceof Error ? reason : new LockAcquireError(name, 'timeout', Math.round(now() - started));
    }
    const waitMs = Math.round(now() - started);
    if (this.events.observed) this.events.emit({ type: 'timeout', name, waitMs });
    return new LockAcquireError(name, 'timeout', waitMs);
  }

  /** Logs the summaries of every interval still counting (on close). */
  flush(): void {
    for (const window of [this.heldSkips, this.heldThrows, this.storeFailures]) window.flush();
  }

  /** Emits the `answered` event of a call. */
  private answer(req: LockRequest, started: number, lock: HeldLock | null, error?: unknown): void {
    let outcome: LockOutcome;
    if (lock) outcome = 'acquired';
    else if (error instanceof LockStoreError) outcome = 'store-error';
    else if (req.options.signal?.aborted) outcome = 'aborted';
    else if (error === undefined) outcome = req.wait ? 'timeout' : 'held';
    // A wait that ran out, or one ended by the application's shutdown.
    else outcome = error instanceof LockAcquireError && error.reason === 'timeout' ? 'timeout' : 'aborted';
    this.events.emit({
      type: 'answered',
      name: req.name,
      label: req.options.label,
      wait: req.wait,
      outcome,
      waitMs: now() - started,
      queued: lock?.queued ?? false,
      fencingToken: lock?.fencingToken,
    });
  }
}
