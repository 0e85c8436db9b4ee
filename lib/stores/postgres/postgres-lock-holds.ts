import type { QueryResultRow } from 'pg';
import type { LockExtension } from '../../contract/lock-provider.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import { limitMismatchMessage } from '../../errors/lock.messages.js';
import type { PostgresLockAsk, PostgresLockAttempt } from './postgres-lock-attempt.js';
import type { PostgresLockDatabase } from './postgres-lock-database.js';
import type { PostgresLockStatements } from './postgres-lock-statements.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';

/**
 * The statements on the lock rows: acquire attempts, extend and release, of
 * a plain lock or of a `holders` entry (a shared hold or a permit). It
 * remembers the owners granted an entry here, whose extend and release try
 * the entries' statements first.
 * @internal
 */
export class PostgresLockHolds {
  /** Keys and owners (`<owner> <key>`) granted a shared hold or a permit here. */
  private readonly permitOwners = new Set<string>();

  /** `waiterLease`: how long a waiter's queue entry lives unless its process renews it. */
  constructor(
    private readonly database: PostgresLockDatabase,
    private readonly tables: PostgresLockTables,
    private readonly sql: PostgresLockStatements,
    private readonly waiterLease: number,
  ) {}

  /**
   * One acquire statement (not bounded): with `ticket` for a queued waiter; with `enqueue`, a first attempt that takes a ticket if not granted.
   * @throws {LockOptionsError} when a first attempt finds the key held or awaited with another limit.
   */
  async attempt(ask: PostgresLockAsk, ticket: string | null, enqueue = false): Promise<PostgresLockAttempt> {
    const { key, owner, ttl, fences, shared, limit } = ask;
    const lease = enqueue ? this.waiterLease : null;
    const rows =
      shared || limit > 1
        ? await this.database.query(this.sql.acquirePermit, [
            key,
            owner,
            ttl,
            ticket,
            lease,
            shared ? 'shared' : 'exclusive',
            limit,
            this.tables.raw,
          ])
        : await this.database.query(this.sql.acquire, [
            key,
            owner,
            ttl,
            ticket,
            lease,
            fences,
            lease === null ? null : ask.direct,
          ]);
    const row = rows[0] ?? {};
    const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
    if (row.conflict !== null && row.conflict !== undefined)
      throw new LockOptionsError(limitMismatchMessage(key, Number(row.conflict), limit));
    const answer = {
      token: num(row.token),
      ticket: (row.ticket as string | null) ?? null,
      mine: ticket === null ? null : num(row.mine),
      heldMs: num(row.held_ms),
      aheadMs: num(row.ahead_ms),
      mineMs: num(row.mine_ms),
      nowMs: num(row.now_ms),
    };
    if ((shared || limit > 1) && (answer.token !== null || answer.mine !== null))
      this.permitOwners.add(`${owner} ${key}`);
    return answer;
  }

  /**
   * Sets the owner's lease to end `ttl` ms from now; whether it still held it.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async extend(key: string, owner: string, ttl: number): Promise<boolean> {
    const extended = await this.database.bounded('extend', key, () =>
      this.byHolder(key, owner, (permit) =>
        this.database.query(permit ? this.sql.extendPermit : this.sql.extend, [key, owner, ttl, this.tables.raw]),
      ),
    );
    if (!extended) this.permitOwners.delete(`${owner} ${key}`);
    return extended !== undefined;
  }

  /**
   * Frees the owner's hold and sends NOTIFY in the same statement; answers
   * release.sql's row (`live`, `next`), if it held it.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async release(key: string, owner: string): Promise<QueryResultRow | undefined> {
    const row = await this.database.bounded('release', key, () =>
      this.byHolder(key, owner, (permit) =>
        this.database.query(permit ? this.sql.releasePermit : this.sql.release, [key, owner, this.tables.raw]),
      ),
    );
    this.permitOwners.delete(`${owner} ${key}`);
    return row;
  }

  /**
   * {@link extend} for several locks: one statement for the plain locks, and
   * one for the entries granted here, sent together.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async extendMany(locks: readonly LockExtension[]): Promise<boolean[]> {
    const out = locks.map(() => false);
    const plain: number[] = [];
    const entries: number[] = [];
    locks.forEach((l, i) => (this.permitOwners.has(`${l.owner} ${l.key}`) ? entries : plain).push(i));
    const batch = async (places: number[], statement: string): Promise<void> => {
      if (places.length === 0) return;
      const values = [
        places.map((i) => locks[i].key),
        places.map((i) => locks[i].owner),
        places.map((i) => locks[i].ttl),
        this.tables.raw,
      ];
      const rows = await this.database.bounded('extend', locks[places[0]].key, () =>
        this.database.query(statement, values),
      );
      for (const row of rows) out[places[(row.i as number) - 1]] = true;
    };
    await Promise.all([batch(plain, this.sql.extendMany), batch(entries, this.sql.extendPermitMany)]);
    return out;
  }

  /**
   * Runs the statement of a `holders` entry for an owner granted one here,
   * else the plain lock's; then the other one if the first found nothing (an
   * entry granted by another provider). Answers the row, if any.
   */
  private async byHolder(
    key: string,
    owner: string,
    run: (permit: boolean) => Promise<QueryResultRow[]>,
  ): Promise<QueryResultRow | undefined> {
    const permit = this.permitOwners.has(`${owner} ${key}`);
    return (await run(permit))[0] ?? (await run(!permit))[0];
  }
}
