import type { PostgresLockDatabase } from './postgres-lock-database.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';
import type { PostgresLockStatements } from './postgres-lock-statements.js';

/** A waiter's entry in the queue table: its ticket, and the key and owner a release may grant it. @internal */
export interface PostgresLockEntry {
  readonly ticket: string;
  readonly key: string;
  readonly owner: string;
}

/** What the entries need of their owner. @internal */
export interface PostgresLockTicketsHost {
  /** Keeps background work for `close()` to wait for. */
  readonly track: <T>(work: Promise<T>) => Promise<T>;
  /** Releases a key a release granted to a waiter that has left (owner-checked: nothing if it does not hold it). */
  readonly release: (key: string, owner: string) => Promise<unknown>;
  /** A heartbeat sent at `sentAt` (`performance.now()`) read `databaseMs` on the database clock. */
  readonly clock: (sentAt: number, databaseMs: unknown) => void;
}

/**
 * The waiters' entries in the queue table, by ticket: renewed while their
 * process waits, removed when they leave. A removal that fails (database
 * away) is kept and done after the next call that succeeds, so that a dead
 * entry does not hold the queue back for its whole lease. An entry that a
 * removal no longer finds was granted by a release meanwhile (or had lapsed):
 * its key is released, since its waiter has gone.
 * @internal
 */
export class PostgresLockTickets {
  /** Entries whose removal failed. */
  private readonly orphans: PostgresLockEntry[] = [];
  private heartbeat?: ReturnType<typeof setInterval>;

  /** `lease`: how long an entry lives unless renewed. */
  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
    private readonly sql: PostgresLockStatements,
    private readonly lease: number,
    private readonly host: PostgresLockTicketsHost,
  ) {}

  /** Removes entries in the background (the next in line of their names is notified). */
  drop(entries: PostgresLockEntry[]): void {
    if (this.database.closed || entries.length === 0) return;
    void this.host.track(
      this.remove('acquire', entries).catch(() => {
        this.orphans.push(...entries);
      }),
    );
  }

  /** {@link drop}, done when the entries are gone (or kept for later). Never rejects. */
  async dropNow(entries: PostgresLockEntry[]): Promise<void> {
    if (this.database.closed) return;
    try {
      await this.remove('acquire', entries);
    } catch {
      this.orphans.push(...entries);
    }
  }

  /** Removes the entries whose removal failed earlier (called after a call that succeeded). */
  dropOrphans(): void {
    if (this.orphans.length > 0) this.drop(this.orphans.splice(0));
  }

  /** Removes the entries of the waiters a closing provider let go, if it can (never rejects). */
  async dropOnClose(entries: PostgresLockEntry[]): Promise<void> {
    if (entries.length > 0 && this.database.opened) await this.remove('close', entries).catch(() => undefined);
  }

  /** Extends the entries' lease in the background: their process still waits. */
  renew(tickets: string[]): void {
    if (tickets.length === 0) return;
    const sent = performance.now();
    void this.host.track(
      this.database
        .bounded('heartbeat', undefined, () => this.database.query(this.sql.heartbeat, [tickets, this.lease]))
        .then((rows) => this.host.clock(sent, rows[0]?.now_ms))
        .catch(() => undefined),
    );
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

  private async remove(operation: string, entries: PostgresLockEntry[]): Promise<void> {
    const rows = await this.database.bounded(operation, undefined, () =>
      this.database.query(this.sql.dequeue, [entries.map((e) => e.ticket), this.tables.raw]),
    );
    const gone = new Set((rows[0]?.gone as string[] | null | undefined) ?? []);
    const granted = entries.filter((e) => !gone.has(e.ticket));
    if (granted.length > 0) await Promise.all(granted.map((e) => this.host.release(e.key, e.owner).catch(() => undefined)));
  }
}
