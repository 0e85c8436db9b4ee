import type { LockLogger } from '../../contract/lock-logger.interface.js';
import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import {
  optionMessage,
  pruneFailedLog,
  prunedLog,
  unknownOptionMessage,
  expected,
} from '../../errors/lock.messages.js';
import { now } from '../../shared/clock.js';
import { assertDuration } from '../../contract/lock-limits.validation.js';
import { sharedTimer, type TimerTarget } from '../../shared/timer.js';
import type { PostgresLockDatabase } from './postgres-lock-database.js';
import type { PostgresLockPruneOptions } from './postgres-lock-options.interface.js';
import { postgresSql, type PostgresLockStatements } from './postgres-lock-statements.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';

/** The background pruning's settings (the `prune` option with its defaults), or `null` when it is off. @internal */
export type PostgresLockPruneSettings = Required<PostgresLockPruneOptions> | null;

/** Default age of `prune()` and of the background pruning: one hour. */
const DEFAULT_OLDER_THAN_MS = 3_600_000;
/** Default interval of the background pruning: five minutes. */
const DEFAULT_EVERY_MS = 300_000;
/** Rows per statement of `prune()`. */
const BATCH = 5_000;
/** Rows per statement of the background pruning: its row locks are held one short statement (a lock call on a pruned name waits for it). */
const BACKGROUND_BATCH = 1_000;
/** At most one warning of failed background runs per this many ms. */
const WARN_EVERY_MS = 3_600_000;

/**
 * Checks the `prune` option and fills in its defaults.
 * @throws {LockOptionsError} for a value that is not `true`, `false` or `{ olderThanMs?, everyMs? }` in range.
 * @internal
 */
export function postgresLockPruneSettings(option: unknown): PostgresLockPruneSettings {
  const where = 'PostgresLockProvider';
  if (option === undefined || option === true) return { olderThanMs: DEFAULT_OLDER_THAN_MS, everyMs: DEFAULT_EVERY_MS };
  if (option === false) return null;
  if (option === null || typeof option !== 'object' || Array.isArray(option)) {
    throw new LockOptionsError(optionMessage(where, 'prune', expected.prune, option));
  }
  const known = ['olderThanMs', 'everyMs'];
  const unknown = Object.keys(option).find((key) => !known.includes(key));
  if (unknown !== undefined) throw new LockOptionsError(unknownOptionMessage(`${where}: prune`, unknown, known));
  const { olderThanMs = DEFAULT_OLDER_THAN_MS, everyMs = DEFAULT_EVERY_MS } = option as PostgresLockPruneOptions;
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
 */
function assertPruneAge(olderThanMs: unknown, where: string, option: string): asserts olderThanMs is number {
  assertDuration(olderThanMs ?? NaN, option, where, false, 60_000);
}

/**
 * Deletes the rows of lock names unused for long: on request (`prune()`), and
 * in the background when `settings` are given. The background runs start once
 * the provider has made its first database call (`start`), about every
 * `everyMs` (jittered), on the shared unref'd timer, never on a lock call's
 * path; one instance at a time per table (a transaction-level advisory lock
 * taken without waiting by each batch: an instance that does not get it
 * skips its turn); batches of {@link BACKGROUND_BATCH} rows, each under a
 * statement timeout within `commandTimeout`. A failed run is logged as a
 * warning (at most once an hour) and never reaches the app.
 * @internal
 */
export class PostgresLockPruner implements TimerTarget {
  private started = false;
  private stopped = false;
  /** The background run in progress, if any. */
  private running: Promise<void> | undefined;
  /** When the last warning was logged (monotonic ms), and failed runs since. */
  private warnedAt = -Infinity;
  private failedSince = 0;
  private readonly batchSql: string | undefined;

  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
    private readonly sql: PostgresLockStatements,
    private readonly settings: PostgresLockPruneSettings,
    private readonly logger: LockLogger,
  ) {
    // Each batch ends on the server a little before the client's bound, as the lock statements of an owned pool do.
    // (a simple-protocol query takes no parameters: the checked numbers go into its text, as whole numbers)
    const int = (v: number): string => String(Math.max(1, Math.floor(v)));
    const timeoutMs = int(database.commandTimeout * 0.9);
    this.batchSql =
      settings === null
        ? undefined
        : postgresSql('prune-batch', tables, {
            olderThanMs: int(settings.olderThanMs),
            batch: int(BACKGROUND_BATCH),
            timeoutMs,
          });
  }

  /**
   * Deletes every row of a lock unused for more than `olderThanMs`, in
   * batches of {@link BATCH}, and answers how many.
   * @throws {LockOptionsError} for an age under a minute, over `MAX_DURATION_MS` or not a finite number.
   * @throws {LockStoreError} when a batch fails or does not answer within `commandTimeout`.
   */
  async prune(olderThanMs: number): Promise<number> {
    assertPruneAge(olderThanMs, 'PostgresLockProvider.prune', 'olderThanMs');
    let total = 0;
    for (;;) {
      const rows = await this.database.bounded('prune', undefined, () =>
        this.database.query(this.sql.prune, [olderThanMs, BATCH]),
      );
      const n = Number(rows[0]?.n ?? 0);
      total += n;
      if (n < BATCH) return total;
    }
  }

  /** Schedules the first background run (once; nothing when pruning is off or stopped). Cheap: called after every query. */
  start(): void {
    if (this.started || this.stopped || this.settings === null) return;
    this.started = true;
    this.schedule();
  }

  /** Cancels the next run; answers when the run in progress, if any, has ended (it starts no further batch). */
  async stop(): Promise<void> {
    this.stopped = true;
    sharedTimer.cancel(this);
    await this.running;
  }

  /** @internal The shared timer's call: one background run. */
  onTimer(): void {
    if (this.stopped) return;
    this.running = this.run().finally(() => {
      this.running = undefined;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.stopped || this.settings === null) return;
    sharedTimer.schedule(this, now() + this.settings.everyMs * (0.75 + Math.random() * 0.5));
  }

  /** Batches until one deletes less than a full batch, or another instance has the turn; never throws. */
  private async run(): Promise<void> {
    const { batchSql, settings } = this;
    if (batchSql === undefined || settings === null) return;
    let total = 0;
    try {
      while (!this.stopped) {
        const rows = await this.database.bounded('prune', undefined, () => this.database.query(batchSql));
        const n = rows[0]?.n;
        if (n === null || n === undefined) break; // another instance is pruning this table
        total += Number(n);
        if (Number(n) < BACKGROUND_BATCH) break;
      }
      if (total > 0) this.logger.debug(prunedLog(this.tables.raw, total, settings.olderThanMs));
    } catch (err) {
      if (this.stopped) return; // closed meanwhile
      if (now() - this.warnedAt < WARN_EVERY_MS) {
        this.failedSince++;
        return;
      }
      this.logger.warn(
        pruneFailedLog(
          this.tables.raw,
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
