/**
 * Shared holds and semaphore permits in MySQL: each decided in a short
 * transaction that row-locks the name's lock row (`SELECT … FOR UPDATE`),
 * since MySQL has no RETURNING and no UPDATE in a CTE.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { LockOptionsError } from '../../errors/lock.errors.js';
import { limitMismatchMessage } from '../../errors/lock.messages.js';
import type { MysqlLockDatabase } from './mysql-lock-database.js';
import {
  fitsHolders,
  liveHolders,
  otherHeldLimit,
  type MysqlLockAsk,
  type MysqlLockHolderEntry,
} from './mysql-lock-holders.js';
import type { MysqlLockStatements } from './mysql-lock-tables.js';

/** The row lease that covers every entry: the latest end from now, in µs (0 when none is left). */
const rowLease = (entries: readonly MysqlLockHolderEntry[], nowUs: number): number =>
  Math.max(0, ...entries.map((h) => h.e - nowUs));

/**
 * The group holders' statements of one provider: acquire, release and
 * extend of a shared hold or a permit, each one owner-checked transaction.
 * @internal
 */
export class MysqlLockPermits {
  constructor(
    private readonly database: MysqlLockDatabase,
    private readonly sql: MysqlLockStatements,
  ) {}

  /**
   * One attempt for a shared hold or a permit: granted when no plain holder
   * holds, the live group holders admit it, and no live waiter is ahead
   * (none at all for a first attempt). The token goes up by one, or to the
   * database clock in µs when that is ahead. A queued waiter's entry goes
   * with its grant.
   * @throws {LockOptionsError} when a first exclusive attempt finds the key held or awaited with another limit.
   */
  async acquire(
    key: string,
    owner: string,
    ttl: number,
    ticket: number | null,
    ask: MysqlLockAsk,
  ): Promise<number | null> {
    await this.database.write(this.sql.permitNew, [key]);
    return this.database.transaction(async (run) => {
      const [row] = (await run(this.sql.permitRow, [key])) as RowDataPacket[];
      if (!row) return null; // pruned meanwhile: the next attempt creates it again
      const nowUs = Number(row.now_us);
      const live = liveHolders(row.holders, nowUs);
      const mine = live.find((h) => h.o === owner);
      if (mine) return ticket === null ? null : mine.t; // a retry whose first try committed
      const ahead = (await run(this.sql.permitAhead, [key, ticket, ticket])) as RowDataPacket[];
      if (ticket === null && !ask.shared) {
        const other =
          ahead.find((w) => w.mode === 'exclusive' && Number(w.permits) !== ask.limit)?.permits ??
          (Number(row.plain_held) === 1 && ask.limit !== 1 ? 1 : otherHeldLimit(live, row.permits, ask.limit));
        if (other !== null && other !== undefined)
          throw new LockOptionsError(limitMismatchMessage(key, Number(other), ask.limit));
      }
      if (
        Number(row.plain_held) === 1 ||
        ahead.length > 0 ||
        !fitsHolders(live, row.permits === null ? null : Number(row.permits), ask)
      )
        return null;
      const token = Math.max(Number(row.fencing_token) + 1, nowUs);
      const entries = [
        ...live,
        {
          o: owner,
          t: token,
          e: nowUs + Math.round(ttl * 1000),
          s: nowUs,
          m: ask.shared ? 'shared' : 'exclusive',
        } as const,
      ];
      const permits = ask.shared ? (live.length > 0 ? row.permits : null) : ask.limit;
      await run(this.sql.permitWrite, [token, JSON.stringify(entries), permits, rowLease(entries, nowUs), key]);
      if (ticket !== null) await run(this.sql.dequeue, [ticket]);
      return token;
    });
  }

  /**
   * Hands the live permit `from` holds over to `to`, with a lease of `ttl`
   * ms and a fencing token above every earlier one: the entry's token goes
   * up by one, or to the database clock in µs when that is ahead. `null`
   * (nothing changed) when `from` holds no live permit of the name.
   */
  transfer(key: string, from: string, to: string, ttl: number): Promise<number | null> {
    return this.database.transaction(async (run) => {
      const [row] = (await run(this.sql.permitRow, [key])) as RowDataPacket[];
      if (!row || row.holders === null) return null;
      const nowUs = Number(row.now_us);
      const live = liveHolders(row.holders, nowUs);
      const entry = live.find((h) => h.o === from && h.m === 'exclusive');
      if (!entry) return null;
      const token = Math.max(Number(row.fencing_token) + 1, nowUs);
      const handed = { o: to, t: token, e: nowUs + Math.round(ttl * 1000), s: nowUs, m: 'exclusive' } as const;
      const entries = live.map((h) => (h === entry ? handed : h));
      await run(this.sql.permitWrite, [token, JSON.stringify(entries), row.permits, rowLease(entries, nowUs), key]);
      return token;
    });
  }

  /** Frees the owner's entry: `null` when it has none (perhaps a plain holder), else whether its lease had not ended. */
  release(key: string, owner: string): Promise<boolean | null> {
    return this.change(key, owner, (live, entry) => live.filter((h) => h !== entry));
  }

  /** Sets the owner's live entry's lease to `ttl` ms from now: `null` when it has no entry, `false` when its lease had ended. */
  extend(key: string, owner: string, ttl: number): Promise<boolean | null> {
    return this.change(key, owner, (live, entry, nowUs) =>
      live.map((h) => (h === entry ? { ...h, e: nowUs + Math.round(ttl * 1000) } : h)),
    );
  }

  /** Rewrites the row's entries by `edit` when the owner has one: the live ones kept (dead ones dropped). */
  private change(
    key: string,
    owner: string,
    edit: (live: MysqlLockHolderEntry[], entry: MysqlLockHolderEntry, nowUs: number) => MysqlLockHolderEntry[],
  ): Promise<boolean | null> {
    return this.database.transaction(async (run) => {
      const [row] = (await run(this.sql.permitRow, [key])) as RowDataPacket[];
      if (!row || row.holders === null) return null;
      const nowUs = Number(row.now_us);
      const all = liveHolders(row.holders, -Infinity);
      if (!all.some((h) => h.o === owner)) return null;
      const live = all.filter((h) => h.e > nowUs);
      const entry = live.find((h) => h.o === owner);
      if (!entry) return false;
      const entries = edit(live, entry, nowUs);
      const permits = entries.length === 0 ? null : row.permits;
      const r = (await run(this.sql.permitWrite, [
        row.fencing_token,
        entries.length === 0 ? null : JSON.stringify(entries),
        permits,
        rowLease(entries, nowUs),
        key,
      ])) as ResultSetHeader;
      return r.affectedRows > 0;
    });
  }
}
