import type { RowDataPacket, ResultSetHeader } from 'mysql2';
import type { LockLogger } from '../../contract/lock-logger.interface.js';
import {
  BACKGROUND_PRUNE_BATCH,
  SqlLockPruner,
  sqlLockPruneSettings,
  type SqlLockPruneSettings,
} from '../sql/sql-lock-pruner.js';
import { sqlStatement, sqlWithTables } from '../sql/sql-statement.js';
import type { MysqlLockDatabase } from './mysql-lock-database.js';
import type { MysqlLockTables } from './mysql-lock-tables.js';

/**
 * Checks the `prune` option of {@link MysqlLockProvider} and fills in its defaults.
 * @throws {LockOptionsError} for a value that is not `true`, `false` or `{ olderThanMs?, everyMs? }` in range.
 * @internal
 */
export function mysqlLockPruneSettings(option: unknown): SqlLockPruneSettings {
  return sqlLockPruneSettings(option, 'MysqlLockProvider');
}

/** The statements of the background pruning, with the table names filled in. */
function pruneStatements(tables: MysqlLockTables) {
  const load = (name: string): string => sqlWithTables(sqlStatement('mysql', name), tables.names);
  return {
    claim: load('prune-claim'),
    unclaim: load('prune-unclaim'),
    candidates: load('prune-candidates'),
    names: load('prune-names'),
    staleTickets: load('prune-stale-tickets'),
    staleWaiters: load('prune-stale-waiters'),
  };
}

/**
 * The MySQL store's background pruning: deletes the rows of lock names unused
 * for more than `olderThanMs` (the rule of `prune()`: the lease ended that
 * long ago, the fencing counter is behind the database clock by as much, no
 * live waiter), and the queue entries of dead waiters, on the schedule of
 * {@link SqlLockPruner}, once the provider has used the database.
 *
 * One instance at a time per table: a run takes a named lock
 * (`GET_LOCK(name, 0)`) on one connection it holds for the run, and an
 * instance that does not get it skips its turn; where the server refuses
 * `GET_LOCK` (an error, not a `0`), it prunes without the turn, as the batches
 * are safe side by side. Each batch reads up to {@link BACKGROUND_PRUNE_BATCH}
 * names without row locks, then deletes them by primary key, checking the
 * rule again on each row under its row lock: no other row is locked, so lock
 * calls on other names never wait for it.
 * @internal
 */
export class MysqlLockPruner extends SqlLockPruner {
  private readonly sql: ReturnType<typeof pruneStatements>;

  constructor(
    private readonly database: MysqlLockDatabase,
    private readonly tables: MysqlLockTables,
    settings: SqlLockPruneSettings,
    logger: LockLogger,
  ) {
    super(settings, tables.raw, logger);
    this.sql = pruneStatements(tables);
  }

  /** The run: on one connection, with the table's turn (or none where `GET_LOCK` fails), until a batch is short. */
  protected async pruneRun({ olderThanMs }: NonNullable<SqlLockPruneSettings>): Promise<number> {
    if (!this.database.opened) return 0; // the provider has not used the database yet
    return this.database.pinned('prune', async (run) => {
      const turn = await run(this.sql.claim, [this.tables.raw, this.tables.raw]).then(
        (rows) => (rows as RowDataPacket[])[0],
        () => undefined, // GET_LOCK refused here: prune without the turn
      );
      const ok = turn?.ok === null || turn?.ok === undefined ? null : Number(turn.ok);
      if (ok === 0) return 0; // another instance is pruning this table
      // (a failed batch throws: the connection is destroyed, which ends its named lock)
      const total = await this.batches(run, Math.round(olderThanMs * 1000));
      if (ok === 1) await run(this.sql.unclaim, [turn!.n]);
      return total;
    });
  }

  /** The batches of names, then of dead waiters' entries, each until one is short (or the pruner stops). */
  private async batches(run: (sql: string, values: unknown[]) => Promise<unknown>, us: number): Promise<number> {
    const batch = String(BACKGROUND_PRUNE_BATCH);
    let total = 0;
    for (let full = true; full && !this.stopped;) {
      const names = ((await run(this.sql.candidates, [us, us, batch])) as RowDataPacket[]).map((r) => String(r.h));
      if (names.length > 0)
        total += ((await run(this.sql.names, [JSON.stringify(names), us, us])) as ResultSetHeader).affectedRows;
      full = names.length === BACKGROUND_PRUNE_BATCH;
    }
    for (let full = true; full && !this.stopped;) {
      const tickets = ((await run(this.sql.staleTickets, [batch])) as RowDataPacket[]).map((r) => Number(r.ticket));
      if (tickets.length > 0) await run(this.sql.staleWaiters, [JSON.stringify(tickets)]);
      full = tickets.length === BACKGROUND_PRUNE_BATCH;
    }
    return total;
  }
}
