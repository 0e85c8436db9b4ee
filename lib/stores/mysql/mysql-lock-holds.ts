import type { LockAcquireRequest } from '../../contract/lock-provider.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import { limitMismatchMessage } from '../../errors/lock.messages.js';
import type { MysqlLockDatabase } from './mysql-lock-database.js';
import { liveHolders, mysqlFences, mysqlLockAsk, otherHeldLimit } from './mysql-lock-holders.js';
import type { MysqlLockPermits } from './mysql-lock-permits.js';
import type { MysqlLockStatements } from './mysql-lock-tables.js';
import type { MysqlLockAttempt } from './mysql-lock-waiting.js';

/** MySQL's ER_DUP_ENTRY: the row of a name was created meanwhile. */
const DUP_ENTRY = 1062;

/** What a release that passes the lock on found: `token` the next owner's grant, or `null` when waiters were queued (it freed the name). @internal */
export interface MysqlLockPassed {
  readonly token: number | null;
  readonly fences: number;
}

/**
 * The statements that take a name's lock row: one acquire attempt (plain,
 * or a shared hold or permit through {@link MysqlLockPermits}), and a
 * release that passes a plain lock on to the next caller of its process.
 * @internal
 */
export class MysqlLockHolds {
  constructor(
    private readonly database: MysqlLockDatabase,
    private readonly sql: MysqlLockStatements,
    private readonly permits: MysqlLockPermits,
  ) {}

  /**
   * One attempt: the owner-checked `UPDATE` of the name's row; when it does
   * not grant, a read of the row says why: held (or a waiter goes first), or
   * no row yet (then the `INSERT` of one), or, for a queued waiter, held by
   * it already (a retry after an attempt whose answer was lost).
   * @throws {LockOptionsError} when a first attempt finds the key held or awaited with another limit.
   */
  async attempt(request: LockAcquireRequest, ticket: number | null): Promise<MysqlLockAttempt> {
    const { key, owner, ttl } = request;
    const ask = mysqlLockAsk(request);
    if (ask.shared || ask.limit > 1)
      return { token: await this.permits.acquire(key, owner, ttl, ticket, ask), group: true };
    const us = Math.round(ttl * 1000);
    const fences = mysqlFences(request);
    for (let tries = 0; tries < 3; tries++) {
      const r = await this.database.write(this.sql.acquire, [owner, fences, us, key, key, ticket, ticket]);
      if (r.affectedRows > 0) return { token: await this.granted(key, owner, r.insertId, fences), fences };
      const state = await this.database.read(this.sql.state, [owner, 1, key]);
      if (state.length > 0) {
        const row = state[0];
        const other = row.other ?? otherHeldLimit(liveHolders(row.holders, Number(row.now_us)), row.permits, 1);
        if (ticket === null && other !== null) throw new LockOptionsError(limitMismatchMessage(key, Number(other), 1));
        // A queued waiter that holds it already: its previous attempt committed and the answer was lost.
        return { token: ticket === null || row.mine === null ? null : Number(row.mine) - fences + 1, fences };
      }
      try {
        const n = await this.database.write(this.sql.acquireNew, [key, owner, fences, us, key]);
        return { token: n.affectedRows > 0 ? await this.granted(key, owner, n.insertId, fences) : null, fences };
      } catch (err) {
        if ((err as { errno?: number }).errno !== DUP_ENTRY) throw err;
      }
    }
    return { token: null };
  }

  /**
   * Releases the owner's plain lock and, when no waiter is queued for the
   * name, grants it to `next` in the same statement. `null`: the owner held
   * no plain lock with a live lease (nothing changed).
   */
  async passOn(key: string, owner: string, next: LockAcquireRequest): Promise<MysqlLockPassed | null> {
    const fences = mysqlFences(next);
    const us = Math.round(next.ttl * 1000);
    const r = await this.database.write(this.sql.releasePass, [key, next.owner, fences, us, key, owner]);
    if (r.affectedRows === 0) return null;
    if (Number(r.insertId) > 0) return { token: Number(r.insertId), fences };
    // No insert id: freed for the waiters, or granted where a server or proxy does not pass it on.
    const [row] = await this.database.read(this.sql.state, [next.owner, 1, key]);
    return { token: row?.mine === null || row?.mine === undefined ? null : Number(row.mine) - fences + 1, fences };
  }

  /**
   * The fencing token of a grant: the insert id `LAST_INSERT_ID(token)` set,
   * or, where a server or proxy does not pass it on (0), a read of the row
   * (which keeps the last token of the grant's block of `fences`).
   */
  private async granted(key: string, owner: string, insertId: number, fences: number): Promise<number> {
    if (Number(insertId) > 0) return Number(insertId);
    const rows = await this.database.read(this.sql.state, [owner, 1, key]);
    return Number(rows[0]?.mine) - fences + 1;
  }
}
