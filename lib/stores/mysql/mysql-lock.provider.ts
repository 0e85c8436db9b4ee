import { Logger } from '@nestjs/common';
import { DEFAULT_COMMAND_TIMEOUT, MAX_DURATION_MS } from '../../contract/lock.constants.js';
import { assertDuration } from '../../contract/lock-limits.validation.js';
import {
  LockProvider,
  lockHolder,
  type LockAcquireRequest,
  type LockExtension,
  type LockGrant,
  type LockHolder,
} from '../../contract/lock-provider.js';
import type { LockInspectPage, LockInspectRequest, StoredLock } from '../../contract/stored-lock.interface.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import {
  expected,
  mysqlKeyTooLongMessage,
  optionMessage,
  providerOptionsExamples,
  providerOptionsMessage,
} from '../../errors/lock.messages.js';
import { assertMysqlConnection } from '../connection-options.validation.js';
import { MysqlLockDatabase } from './mysql-lock-database.js';
import { liveHolders } from './mysql-lock-holders.js';
import { MysqlLockPermits } from './mysql-lock-permits.js';
import { MysqlLockHolds, type MysqlLockPassed } from './mysql-lock-holds.js';
import { MysqlLockCoalesced } from './mysql-lock-coalesced.js';
import type { MysqlLockProviderOptions } from './mysql-lock-options.interface.js';
import { MysqlLockPruner, mysqlLockPruneSettings } from './mysql-lock-pruner.js';
import {
  DEFAULT_MYSQL_LOCK_TABLE,
  mysqlLockStatements,
  mysqlLockTables,
  schemaSql,
  type MysqlLockStatements,
} from './mysql-lock-tables.js';
import { MysqlLockWaiting } from './mysql-lock-waiting.js';

/** Longest lock key (prefix included), in bytes: the `name` column (`VARBINARY(2000)`). */
const MAX_KEY_BYTES = 2_000;
/** Rows `prune()` deletes per statement. */
const PRUNE_BATCH = 5_000;

/**
 * A lock store in MySQL 8.0+ or MariaDB 10.6+, for apps that have such a
 * database and no Redis. Each lock is a row (name, owner, fencing token,
 * lease end) in `tableName`; taking it is one owner-checked `UPDATE` (or the
 * `INSERT` of a new name), and every lease runs on the database's clock.
 * No `RETURNING` (MySQL has none): the fencing token comes back through
 * `LAST_INSERT_ID()`.
 *
 * Waiting queues FIFO in a waiters table by ticket. MySQL has no LISTEN/NOTIFY:
 * one watcher per provider looks at every name its waiters wait for in one
 * statement (after 2 ms while the queues move, backing off to 100 ms, and at
 * a holder's lease end), and a release by this process wakes its next waiter
 * at once. No `GET_LOCK` on the lock path: it pins a connection per lock and
 * is unsafe behind ProxySQL and on Galera. Rows of names unused for long are
 * pruned in the background (the `prune` option; {@link MysqlLockProvider.prune}
 * on request).
 *
 * `mysql2` is an optional peer dependency, loaded on first use.
 *
 * @example
 * ```ts
 * LockModule.forRoot({ mysql: process.env.MYSQL_URL })                 // via the module
 * new MysqlLockProvider({ connection: pool, tableName: 'app_locks' })  // or directly, on an app's mysql2 pool
 * ```
 */
export class MysqlLockProvider extends LockProvider {
  /** `'mysql'`. */
  readonly kind = 'mysql';
  /** The bound on every database call, in ms. */
  readonly commandTimeout: number;
  /** The lock table as configured. */
  readonly tableName: string;

  /** Semaphores (`limit`) and shared locks (`mode: 'shared'`): several holders of one name, each with its own lease. */
  override readonly supports = { limit: true, shared: true } as const;

  /** A plain grant reserves `request.fences` fencing tokens: the engine hands locks over locally. */
  override readonly fenceBlocks = true;

  private readonly sql: MysqlLockStatements;
  private readonly database: MysqlLockDatabase;
  private readonly permits: MysqlLockPermits;
  private readonly holds: MysqlLockHolds;
  /** Inside {@link coalesce}: the release and the next waiter's acquire it issued. */
  private coalescing: MysqlLockCoalesced | undefined;
  private readonly waiting: MysqlLockWaiting;
  private readonly pruner: MysqlLockPruner;

  /**
   * @throws {LockOptionsError} for an invalid option (checked now, before any connection).
   */
  constructor(options: MysqlLockProviderOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new LockOptionsError(providerOptionsMessage('MysqlLockProvider', providerOptionsExamples.mysql));
    }
    const {
      connection,
      tableName = DEFAULT_MYSQL_LOCK_TABLE,
      commandTimeout = DEFAULT_COMMAND_TIMEOUT,
      createTable = true,
      prune,
    } = options;
    assertMysqlConnection(connection, 'MysqlLockProvider');
    assertDuration(commandTimeout, 'commandTimeout', 'MysqlLockProvider', false);
    if (typeof createTable !== 'boolean')
      throw new LockOptionsError(optionMessage('MysqlLockProvider', 'createTable', expected.boolean, createTable));
    const pruneSettings = mysqlLockPruneSettings(prune);
    const tables = mysqlLockTables(tableName);
    this.sql = mysqlLockStatements(tables);
    this.tableName = tableName;
    this.commandTimeout = commandTimeout;
    this.database = new MysqlLockDatabase({ connection, tables, sql: this.sql, createTable, commandTimeout });
    this.permits = new MysqlLockPermits(this.database, this.sql);
    this.holds = new MysqlLockHolds(this.database, this.sql, this.permits);
    const waiterLease = Math.min(MAX_DURATION_MS, Math.max(5_000, 2 * commandTimeout));
    this.waiting = new MysqlLockWaiting(
      this.database,
      this.sql,
      (request, ticket) => this.holds.attempt(request, ticket),
      waiterLease,
    );
    this.pruner = new MysqlLockPruner(this.database, tables, pruneSettings, new Logger(MysqlLockProvider.name));
    this.pruner.start();
  }

  /**
   * The SQL that creates the tables (idempotent: `IF NOT EXISTS`), for teams
   * whose migrations own the schema. Use it with `createTable: false`.
   *
   * @example
   * ```ts
   * await queryRunner.query(MysqlLockProvider.schemaSql('nest_locks'));
   * ```
   */
  static schemaSql(tableName: string = DEFAULT_MYSQL_LOCK_TABLE): string {
    return schemaSql(mysqlLockTables(tableName));
  }

  /**
   * One statement when the lock is free (two for a name never used). A
   * waiting call takes a ticket in the waiters table and tries again when
   * the watcher or a release of this process wakes it. A shared hold or a
   * permit is one short transaction on the name's row-locked row.
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout`.
   * @throws {LockOptionsError} when the key is held or awaited with another `limit`.
   */
  async acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const { key } = request;
    if (Buffer.byteLength(key) > MAX_KEY_BYTES)
      throw new LockOptionsError(mysqlKeyTooLongMessage(key, Buffer.byteLength(key), MAX_KEY_BYTES));
    const held = this.coalescing?.holdNext(request);
    if (held) return held;
    if (request.wait && !request.signal?.aborted && request.waitTimeout !== 0) return this.waiting.acquire(request);
    const once = await this.database.bounded('acquire', key, () => this.holds.attempt(request, null));
    return once.token === null ? null : { fencingToken: once.token, fences: once.fences ?? 1 };
  }

  /**
   * Sets the owner's lease to end `ttl` ms from now, on the database's clock;
   * this process's waiters of the name look again soon (the lease may be shorter).
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout`.
   */
  async extend(key: string, owner: string, ttl: number): Promise<boolean> {
    const extended = await this.database.bounded('extend', key, async () => {
      const r = await this.database.write(this.sql.extend, [Math.round(ttl * 1000), key, owner]);
      return r.affectedRows > 0 || ((await this.permits.extend(key, owner, ttl)) ?? false);
    });
    this.waiting.extended(key);
    return extended;
  }

  /**
   * {@inheritDoc LockProvider.extendMany}
   * One statement (an `UPDATE` joined to a JSON array of the locks, in name
   * order) for all of them: a renewal of many held locks is one round trip.
   * MySQL has no `RETURNING`: when fewer rows changed than locks were sent,
   * `extend` of each says which (a live lease extended twice is harmless).
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout`.
   */
  async extendMany(locks: readonly LockExtension[]): Promise<boolean[]> {
    if (locks.length === 0) return [];
    const ordered = [...locks].sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
    const json = JSON.stringify(ordered.map((l) => ({ k: l.key, o: l.owner, t: Math.round(l.ttl * 1000) })));
    const r = await this.database.bounded('extend', locks[0].key, () =>
      this.database.write(this.sql.extendMany, [json]),
    );
    for (const l of locks) this.waiting.extended(l.key);
    if (r.affectedRows === locks.length) return locks.map(() => true);
    return Promise.all(locks.map((l) => this.extend(l.key, l.owner, l.ttl)));
  }

  /**
   * Frees the owner's lock (the row stays, with its fencing counter), and
   * wakes this process's next waiter of the name at once.
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout`.
   */
  async release(key: string, owner: string): Promise<boolean> {
    const held = this.coalescing?.holdRelease(key, owner);
    if (held) return held;
    const released = await this.database.bounded('release', key, async () => {
      const r = await this.database.write(this.sql.release, [key, owner]);
      return r.affectedRows > 0 || ((await this.permits.release(key, owner)) ?? false);
    });
    this.waiting.released(key);
    return released;
  }

  /**
   * {@inheritDoc LockProvider.coalesce}
   * A release of a plain lock and a wait for the same name issued after it
   * (the process's next caller) go as one statement: the name passes to that
   * caller when no waiter is queued for it; else it is freed for the waiters
   * and the caller queues behind them at once. Other calls go as usual.
   */
  coalesce<T>(send: () => T): T {
    if (this.coalescing || this.database.closed) return send();
    const batch = (this.coalescing = new MysqlLockCoalesced());
    try {
      return send();
    } finally {
      this.coalescing = undefined;
      void this.sendCoalesced(batch);
    }
  }

  /**
   * {@inheritDoc LockProvider.transfer}
   * One transaction on the name's row-locked row: `from`'s entry becomes
   * `to`'s, with a fencing token above every earlier one of the name.
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout`.
   */
  async transfer(key: string, from: string, to: string, ttl: number): Promise<LockGrant | null> {
    const token = await this.database.bounded('transfer', key, () => this.permits.transfer(key, from, to, ttl));
    return token === null ? null : { fencingToken: token };
  }

  /**
   * Deletes the rows of locks whose lease ended more than `olderThanMs` ago
   * (default one hour; at least one minute), in batches of 5 000, and answers
   * how many. The table keeps one row per lock name ever used (the row
   * carries the name's fencing counter); the provider prunes in the
   * background by itself (the `prune` option), so call this only with
   * `prune: false` or to prune now. A name whose row was deleted starts again from the
   * database clock in microseconds, ahead of every token the old row gave
   * (only rows whose counter is behind the clock by `olderThanMs` go), unless
   * the database clock is set back by more than that. Rows with a live holder
   * or a live waiter are never deleted.
   *
   * @example
   * ```ts
   * const deleted = await provider.prune(24 * 3_600_000); // unused for a day
   * ```
   * @throws {LockOptionsError} for an `olderThanMs` under 60 000, over `MAX_DURATION_MS` or not a finite number.
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout` (per batch).
   */
  async prune(olderThanMs: number = 3_600_000): Promise<number> {
    assertDuration(olderThanMs, 'olderThanMs', 'MysqlLockProvider.prune', false, 60_000);
    const us = Math.round(olderThanMs * 1000);
    let deleted = 0;
    for (;;) {
      const r = await this.database.bounded('prune', undefined, () =>
        this.database.write(this.sql.prune, [us, us, String(PRUNE_BATCH)]),
      );
      deleted += r.affectedRows;
      if (r.affectedRows < PRUNE_BATCH) return deleted;
    }
  }

  /**
   * {@inheritDoc LockProvider.holder}
   * @throws {LockStoreError} when MySQL fails or does not answer within `commandTimeout`.
   */
  async holder(key: string): Promise<LockHolder | null> {
    const rows = await this.database.bounded('holder', key, () => this.database.read(this.sql.holder, [key]));
    const row = rows[0];
    if (row === undefined) return null;
    if (row.owner !== null) return lockHolder(String(row.owner), Number(row.held_us) / 1_000);
    // Group holders: the one whose lease runs longest.
    const live = liveHolders(row.holders, Number(row.now_us)).sort((a, b) => b.e - a.e);
    return live.length === 0 ? null : lockHolder(live[0].o, (live[0].e - Number(row.now_us)) / 1_000);
  }

  /** {@inheritDoc LockProvider.inspect} Reads the locks table in name order. */
  async inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    const { prefix, cursor = null, limit } = request;
    const rows = await this.database.bounded('inspect', undefined, () =>
      this.database.read(this.sql.inspect, [prefix, prefix, prefix, cursor, cursor, String(limit + 1)]),
    );
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    const locks = page.flatMap((row): StoredLock[] => {
      const [key, waiters] = [String(row.name), Number(row.waiters)];
      if (row.owner === null) {
        const nowUs = Number(row.now_us);
        return liveHolders(row.holders, nowUs).map((h) => ({
          key,
          owner: h.o,
          permits: h.m === 'shared' ? 1 : Number(row.permits),
          mode: h.m,
          fencingToken: h.t,
          remainingMs: (h.e - nowUs) / 1_000,
          heldSince: Math.round(h.s / 1_000),
          waiters,
        }));
      }
      const since = row.acquired_us === null ? {} : { heldSince: Math.round(Number(row.acquired_us) / 1_000) };
      return [
        {
          key,
          owner: String(row.owner),
          permits: 1,
          mode: 'exclusive',
          fencingToken: Number(row.token),
          remainingMs: Number(row.held_us) / 1_000,
          ...since,
          waiters,
        },
      ];
    });
    return more ? { locks, cursor: String(page[page.length - 1].name) } : { locks };
  }

  /**
   * Round trip of a read of both tables, in ms (so a missing table fails it).
   * @throws {LockStoreError} when MySQL does not answer within `commandTimeout`.
   */
  async ping(): Promise<number> {
    const started = performance.now();
    await this.database.bounded('ping', undefined, () => this.database.read(this.sql.ping));
    return performance.now() - started;
  }

  /**
   * Resolves queued waiters `null` (and deletes their queue entries), and
   * ends the pool if the provider opened it (a `mysql2` pool you passed stays
   * open). Calls after it fail with {@link LockStoreError}.
   */
  async close(): Promise<void> {
    if (this.database.closed) return;
    const pruning = this.pruner.stop();
    this.database.shutDown();
    await this.waiting.close();
    await pruning;
    await this.database.end();
  }

  /** Sends what a coalesce held back: a release and the next waiter's acquire as one statement, else each as usual. */
  private async sendCoalesced({ release, next }: MysqlLockCoalesced): Promise<void> {
    if (!release) return;
    const { key, owner } = release.args;
    if (next) {
      let passed: MysqlLockPassed | null;
      try {
        passed = await this.database.bounded('release', key, () => this.holds.passOn(key, owner, next.args));
      } catch (err) {
        release.settle(Promise.reject(err));
        next.settle(this.acquire(next.args));
        return;
      }
      if (passed !== null) {
        release.settle(true);
        if (passed.token !== null) return next.settle({ fencingToken: passed.token, fences: passed.fences });
        this.waiting.released(key);
        return next.settle(this.waiting.acquire(next.args, true));
      }
    }
    // No next waiter, or not a plain lock on a live lease: the usual calls, in order.
    const released = this.release(key, owner);
    release.settle(released);
    if (!next) return;
    await released.catch(() => undefined);
    next.settle(this.acquire(next.args));
  }
}
