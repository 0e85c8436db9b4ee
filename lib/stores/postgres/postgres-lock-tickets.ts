import type { PostgresLockDatabase } from './postgres-lock-database.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';
import type { PostgresLockStatements } from './postgres-lock-statements.js';
import type { PostgresLockClock } from './postgres-lock-clock.js';

/** A waiter's entry in the queue table: its ticket, and the key and owner a release may grant it. @internal */
export interface PostgresLockEntry {
  readonly ticket: string;
  readonly key: string;
  readonly owner: string;
}

/**
 * The waiters' entries in the queue table, by ticket: renewed while their
 * process waits, removed when they leave. A removal that fails (database
 * away) is kept and done after the next call that succeeds, so that a dead
 * entry does not hold the queue back for its whole lease. An entry that a
 * removal no longer finds was granted by a release meanwhile (or had lapsed):
 * a removal answers those entries, whose keys the caller releases, since
 * their waiters have gone.
 * @internal
 */
export class PostgresLockTickets {
  /** Entries whose removal failed. */
  private readonly orphans: PostgresLockEntry[] = [];
  private heartbeat?: ReturnType<typeof setInterval>;
  /** Heartbeats in flight, for {@link settled}. */
  private readonly pending = new Set<Promise<unknown>>();

  /** `lease`: how long an entry lives unless renewed; `clock`: sampled by each heartbeat. */
  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
    private readonly sql: PostgresLockStatements,
    private readonly lease: number,
    private readonly clock: PostgresLockClock,
  ) {}

  /**
   * Removes the entries (the next in line of their names is notified); answers
   * those a release granted meanwhile, for the caller to release. A failed
   * removal keeps the entries for later and answers none. Never rejects.
   */
  async drop(entries: PostgresLockEntry[]): Promise<PostgresLockEntry[]> {
    if (this.database.closed || entries.length === 0) return [];
    try {
      return await this.remove('acquire', entries);
    } catch {
      this.orphans.push(...entries);
      return [];
    }
  }

  /** Removes the entries whose removal failed earlier (after a call that succeeded); answers as {@link drop}. */
  dropOrphans(): Promise<PostgresLockEntry[]> {
    return this.orphans.length > 0 ? this.drop(this.orphans.splice(0)) : Promise.resolve([]);
  }

  /** Removes the entries of the waiters a closing provider let go, if it can; answers as {@link drop} (never rejects). */
  async dropOnClose(entries: PostgresLockEntry[]): Promise<PostgresLockEntry[]> {
    if (entries.length === 0 || !this.database.opened) return [];
    return this.remove('close', entries).catch(() => []);
  }

  /** Extends the entries' lease in the background: their process still waits. */
  renew(tickets: string[]): void {
    if (tickets.length === 0) return;
    const sent = performance.now();
    const beat = this.database
      .bounded('heartbeat', undefined, () => this.database.query(this.sql.heartbeat, [tickets, this.lease]))
      .then((rows) => this.clock.sample(sent, rows[0]?.now_ms))
      .catch(() => undefined);
    this.pending.add(beat);
    void beat.finally(() => this.pending.delete(beat));
  }

  /** While waiters exist: renews the entries `tickets()` every third of their lease, and runs `also` (a check of the listen connection). */
  startHeartbeat(tickets: () => string[], also: () => void): void {
    if (this.heartbeat !== undefined) return;
    this.heartbeat = setInterval(() => {
      this.renew(tickets());
      also();
    }, this.lease / 3);
    this.heartbeat.unref?.();
  }

  stopHeartbeat(): void {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** Resolves when no heartbeat is in flight. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async remove(operation: string, entries: PostgresLockEntry[]): Promise<PostgresLockEntry[]> {
    const rows = await this.database.bounded(operation, undefined, () =>
      this.database.query(this.sql.dequeue, [entries.map((e) => e.ticket), this.tables.raw]),
    );
    const gone = new Set((rows[0]?.gone as string[] | null | undefined) ?? []);
    return entries.filter((e) => !gone.has(e.ticket));
  }
}
