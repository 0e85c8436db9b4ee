import type { LockLogger } from '../../contract/lock-logger.interface.js';
import {
  assertPruneAge,
  BACKGROUND_PRUNE_BATCH,
  SqlLockPruner,
  sqlLockPruneSettings,
  type SqlLockPruneSettings,
} from '../sql/sql-lock-pruner.js';
import type { PostgresLockDatabase } from './postgres-lock-database.js';
import { postgresSql, type PostgresLockStatements } from './postgres-lock-statements.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';

/** The background pruning's settings (the `prune` option with its defaults), or `null` when it is off. @internal */
export type PostgresLockPruneSettings = SqlLockPruneSettings;

/** Rows per statement of `prune()`. */
const BATCH = 5_000;

/**
 * Checks the `prune` option and fills in its defaults.
 * @throws {LockOptionsError} for a value that is not `true`, `false` or `{ olderThanMs?, everyMs? }` in range.
 * @internal
 */
export function postgresLockPruneSettings(option: unknown): PostgresLockPruneSettings {
  return sqlLockPruneSettings(option, 'PostgresLockProvider');
}

/**
 * Deletes the rows of lock names unused for long: on request (`prune()`), and
 * in the background when `settings` are given. The background runs start once
 * the provider has made its first database call (`start`), on the schedule of
 * {@link SqlLockPruner}; one instance at a time per table (a
 * transaction-level advisory lock taken without waiting by each batch: an
 * instance that does not get it skips its turn); batches of
 * {@link BACKGROUND_PRUNE_BATCH} rows, each under a statement timeout within
 * `commandTimeout`.
 * @internal
 */
export class PostgresLockPruner extends SqlLockPruner {
  private readonly batchSql: string | undefined;

  constructor(
    private readonly database: PostgresLockDatabase,
    tables: PostgresLockTables,
    private readonly sql: PostgresLockStatements,
    settings: PostgresLockPruneSettings,
    logger: LockLogger,
  ) {
    super(settings, tables.raw, logger);
    // Each batch ends on the server a little before the client's bound, as the lock statements of an owned pool do.
    // (a simple-protocol query takes no parameters: the checked numbers go into its text, as whole numbers)
    const int = (v: number): string => String(Math.max(1, Math.floor(v)));
    const timeoutMs = int(database.commandTimeout * 0.9);
    this.batchSql =
      settings === null
        ? undefined
        : postgresSql('prune-batch', tables, {
            olderThanMs: int(settings.olderThanMs),
            batch: int(BACKGROUND_PRUNE_BATCH),
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

  /** Batches until one deletes less than a full batch, or another instance has the turn. */
  protected async pruneRun(): Promise<number> {
    const { batchSql } = this;
    if (batchSql === undefined) return 0;
    let total = 0;
    while (!this.stopped) {
      const rows = await this.database.bounded('prune', undefined, () => this.database.query(batchSql));
      const n = rows[0]?.n;
      if (n === null || n === undefined) break; // another instance is pruning this table
      total += Number(n);
      if (Number(n) < BACKGROUND_PRUNE_BATCH) break;
    }
    return total;
  }
}
