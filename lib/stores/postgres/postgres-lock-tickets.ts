import type { PostgresLockDatabase } from './postgres-lock-database.js';
import type { PostgresLockTables } from './postgres-lock-schema.sql.js';
import type { PostgresLockStatements } from './postgres-lock.sql.js';

/**
 * The waiters' entries in the queue table, by ticket: renewed while their
 * process waits, removed when they leave. A removal that fails (database
 * away) is kept and done after the next call that succeeds, so that a dead
 * entry does not hold the queue back for its whole lease.
 * @internal
 */
export class PostgresLockTickets {
  /** Entries whose removal failed. */
  private readonly orphans: string[] = [];

  /** `lease`: how long an entry lives unless renewed; `track` keeps background work for `close()` to wait for. */
  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
    private readonly sql: PostgresLockStatements,
    private readonly lease: number,
    private readonly track: <T>(work: Promise<T>) => Promise<T>,
  ) {}

  /** Removes entries in the background (the next in line of their names is notified). */
  drop(tickets: string[]): void {
    if (this.database.closed || tickets.length === 0) return;
    void this.track(
      this.remove('acquire', tickets).catch(() => {
        this.orphans.push(...tickets);
      }),
    );
  }

  /** {@link drop}, done when the entries are gone (or kept for later). Never rejects. */
  async dropNow(tickets: string[]): Promise<void> {
    if (this.database.closed) return;
    try {
      await this.remove('acquire', tickets);
    } catch {
      this.orphans.push(...tickets);
    }
  }

  /** Removes the entries whose removal failed earlier (called after a call that succeeded). */
  dropOrphans(): void {
    if (this.orphans.length > 0) this.drop(this.orphans.splice(0));
  }

  /** Removes the entries of the waiters a closing provider let go, if it can (never rejects). */
  async dropOnClose(tickets: string[]): Promise<void> {
    if (tickets.length > 0 && this.database.opened) await this.remove('close', tickets).catch(() => undefined);
  }

  /** Extends the entries' lease in the background: their process still waits. */
  renew(tickets: string[]): void {
    if (tickets.length === 0) return;
    void this.track(this.database.bounded('heartbeat', undefined, () => this.database.query(this.sql.heartbeat, [tickets, this.lease])).catch(() => undefined));
  }

  private remove(operation: string, tickets: string[]): Promise<unknown> {
    return this.database.bounded(operation, undefined, () => this.database.query(this.sql.dequeue, [tickets, this.tables.raw]));
  }
}
