import type { LockLogger } from '../../contract/lock-logger.interface.js';
import { assertDuration } from '../../contract/lock-limits.validation.js';
import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import {
  expected,
  optionMessage,
  pruneFailedLog,
  prunedLog,
  unknownOptionMessage,
} from '../../errors/lock.messages.js';
import { now } from '../../shared/clock.js';
import { sharedTimer, type TimerTarget } from '../../shared/timer.js';

/** The `prune` option of a SQL store: the background pruning's age and interval. @internal */
export interface SqlLockPruneOptions {
  readonly olderThanMs?: number;
  readonly everyMs?: number;
}

/** The background pruning's settings (the `prune` option with its defaults), or `null` when it is off. @internal */
export type SqlLockPruneSettings = Required<SqlLockPruneOptions> | null;

/** Default age of `prune()` and of the background pruning: one hour. @internal */
export const DEFAULT_PRUNE_OLDER_THAN_MS = 3_600_000;
/** Default interval of the background pruning: five minutes. */
const DEFAULT_EVERY_MS = 300_000;
/** Rows per statement of the background pruning: its row locks are held one short statement (a lock call on a pruned name waits for it). @internal */
export const BACKGROUND_PRUNE_BATCH = 1_000;
/** At most one warning of failed background runs per this many ms. */
const WARN_EVERY_MS = 3_600_000;

/**
 * Checks a SQL store's `prune` option and fills in its defaults (`where`: the provider, for messages).
 * @throws {LockOptionsError} for a value that is not `true`, `false` or `{ olderThanMs?, everyMs? }` in range.
 * @internal
 */
export function sqlLockPruneSettings(option: unknown, where: string): SqlLockPruneSettings {
  if (option === undefined || option === true)
    return { olderThanMs: DEFAULT_PRUNE_OLDER_THAN_MS, everyMs: DEFAULT_EVERY_MS };
  if (option === false) return null;
  if (option === null || typeof option !== 'object' || Array.isArray(option)) {
    throw new LockOptionsError(optionMessage(where, 'prune', expected.prune, option));
  }
  const known = ['olderThanMs', 'everyMs'];
  const unknown = Object.keys(option).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new LockOptionsError(unknownOptionMessage(`${where}: prune`, unknown, known));
  const { olderThanMs = DEFAULT_PRUNE_OLDER_THAN_MS, everyMs = DEFAULT_EVERY_MS } = option as SqlLockPruneOptions;
  assertPruneAge(olderThanMs, where, 'prune.olderThanMs');
  if (typeof everyMs !== 'number' || !Number.isFinite(everyMs) || everyMs < 1_000 || everyMs > 86_400_000) {
    throw new LockOptionsError(optionMessage(where, 'prune.everyMs', expected.pruneEvery, everyMs));
  }
  return { olderThanMs, everyMs };
}

/**
 * Checks an age for pruning: a finite number of ms, at least a minute, at
 * most `MAX_DURATION_MS` (as every duration; a larger one overflowed the interval).
 * @throws {LockOptionsError} naming `where` and `option`.
 * @internal
 */
export function assertPruneAge(olderThanMs: unknown, where: string, option: string): asserts olderThanMs is number {
  assertDuration(olderThanMs ?? NaN, option, where, false, 60_000);
}

/**
 * The schedule of a SQL store's background pruning: runs about every
 * `everyMs` (each wait drawn between 0.75 and 1.25 times it, so replicas
 * started together spread out), on the shared unref'd timer, never on a lock
 * call's path. A store's pruner says what one run is ({@link pruneRun}). A
 * failed run is logged as a warning (at most once an hour) and never reaches
 * the app; `stop()` ends the schedule and waits for the run in progress.
 * @internal
 */
export abstract class SqlLockPruner implements TimerTarget {
  private started = false;
  private isStopped = false;
  /** The background run in progress, if any. */
  private running: Promise<void> | undefined;
  /** When the last warning was logged (monotonic ms), and failed runs since. */
  private warnedAt = -Infinity;
  private failedSince = 0;

  constructor(
    /** The settings of the background pruning, `null` when it is off. */
    protected readonly settings: SqlLockPruneSettings,
    /** The lock table as configured, for the logs. */
    private readonly table: string,
    private readonly logger: LockLogger,
  ) {}

  /** Whether `stop()` was called: a run starts no further batch. */
  protected get stopped(): boolean {
    return this.isStopped;
  }

  /**
   * One background run with the settings: batches until one deletes less than a
   * full batch, or another instance has the turn. Answers the rows deleted.
   * @throws {LockStoreError} when a batch fails (logged by the schedule).
   */
  protected abstract pruneRun(settings: NonNullable<SqlLockPruneSettings>): Promise<number>;

  /** Schedules the first background run (once; nothing when pruning is off or stopped). Cheap: may be called after every query. */
  start(): void {
    if (this.started || this.isStopped || this.settings === null) return;
    this.started = true;
    this.schedule();
  }

  /** Cancels the next run; answers when the run in progress, if any, has ended (it starts no further batch). */
  async stop(): Promise<void> {
    this.isStopped = true;
    sharedTimer.cancel(this);
    await this.running;
  }

  /** @internal The shared timer's call: one background run. */
  onTimer(): void {
    if (this.isStopped) return;
    this.running = this.run().finally(() => {
      this.running = undefined;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.isStopped || this.settings === null) return;
    sharedTimer.schedule(this, now() + this.settings.everyMs * (0.75 + Math.random() * 0.5));
  }

  /** One run, logged; never throws. */
  private async run(): Promise<void> {
    const { settings } = this;
    if (settings === null) return;
    try {
      const total = await this.pruneRun(settings);
      if (total > 0) this.logger.debug(prunedLog(this.table, total, settings.olderThanMs));
    } catch (err) {
      if (this.isStopped) return; // closed meanwhile
      if (now() - this.warnedAt < WARN_EVERY_MS) {
        this.failedSince++;
        return;
      }
      this.logger.warn(
        pruneFailedLog(
          this.table,
          err instanceof LockStoreError ? err.detail : String(err),
          settings.everyMs,
          this.failedSince,
        ),
      );
      this.warnedAt = now();
      this.failedSince = 0;
    }
  }
}
