import { Logger } from '@nestjs/common';
import { DEFAULT_COMMAND_TIMEOUT, MAX_DURATION_MS } from '../../contract/lock.constants.js';
import { assertDuration } from '../../contract/lock-limits.validation.js';
import {
  LockProvider,
  lockHolder,
  type LockAcquireRequest,
  type LockGrant,
  type LockHolder,
} from '../../contract/lock-provider.js';
import type { LockInspectPage, LockInspectRequest, StoredLock } from '../../contract/stored-lock.interface.js';
import { LockOptionsError } from '../../errors/lock.errors.js';
import {
  keyTooLongMessage,
  optionMessage,
  providerOptionsMessage,
  expected,
  providerOptionsExamples,
} from '../../errors/lock.messages.js';
import { assertPostgresConnection } from '../connection-options.validation.js';
import { PostgresLockDatabase } from './postgres-lock-database.js';
import type { PostgresLockProviderOptions } from './postgres-lock-options.interface.js';
import { PostgresLockWaiting } from './postgres-lock-waiting.js';
import type { PostgresLockAsk } from './postgres-lock-attempt.js';
import { PostgresLockHolds } from './postgres-lock-holds.js';
import type { LockExtension } from '../../contract/lock-provider.js';
import { DEFAULT_POSTGRES_LOCK_TABLE, postgresLockTables, type PostgresLockTables } from './postgres-lock-tables.js';
import { pingSql, schemaSql } from './postgres-lock-schema.js';
import { postgresLockStatements, type PostgresLockStatements } from './postgres-lock-statements.js';
import { PostgresLockPruner, postgresLockPruneSettings } from './postgres-lock-pruner.js';

/** Longest lock key (prefix included), in UTF-8 bytes: well under what a btree index entry may hold. */
const MAX_KEY_BYTES = 2_000;

/**
 * A lock store in PostgreSQL, for apps that have a database and no Redis.
 * Each lock is a row (name, owner token, fencing token, expiry) in
 * `tableName`; acquiring is one `INSERT ... ON CONFLICT DO UPDATE` that also
 * takes over an expired lease, and every expiry uses the database's clock.
 *
 * Waiting does not poll: the provider keeps one `LISTEN` connection, release
 * sends `NOTIFY`, and waiters re-check when notified, at the holder's lease
 * end (a holder that crashed sends nothing), and after the listen connection
 * reconnects. Waiters queue in a table with tickets, so they are granted in
 * arrival order across processes too; a waiter's queue entry has a short lease
 * of its own that the waiting process renews, so a crashed waiter does not
 * block the queue for long.
 *
 * No session-level advisory locks: they pin a pooled connection per held lock
 * and vanish with it. (Transaction-level ones serialize the table creation,
 * and take turns at the background pruning, inside their own transactions.)
 *
 * The table keeps one row per lock name (its fencing counter); the provider
 * deletes the rows of names unused for an hour by itself, in the background
 * (the `prune` option; {@link PostgresLockProvider.prune} on request).
 *
 * `pg` is an optional peer dependency, loaded on first use.
 *
 * @example
 * ```ts
 * LockModule.forRoot({ postgres: process.env.DATABASE_URL })          // via the module
 * new PostgresLockProvider({ connection: pool, tableName: 'app.locks' }) // or directly
 * ```
 */
export class PostgresLockProvider extends LockProvider {
  /** `'postgres'`. */
  readonly kind = 'postgres';
  /** A grant reserves `request.fences` fencing tokens: the engine hands locks over locally. */
  override readonly fenceBlocks = true;
  /** Semaphores (`limit`) and shared locks (`mode: 'shared'`): several holders of one name, each with its own lease. */
  override readonly supports = { limit: true, shared: true } as const;
  /** The bound on every database call, in ms. */
  readonly commandTimeout: number;
  /** The lock table as configured (also the NOTIFY channel). */
  readonly tableName: string;

  private readonly tables: PostgresLockTables;
  private readonly sql: PostgresLockStatements;
  private readonly database: PostgresLockDatabase;
  /** The statements on the lock rows. */
  private readonly holds: PostgresLockHolds;
  private readonly waiting: PostgresLockWaiting;
  private readonly pruner: PostgresLockPruner;
  /** How long a waiter's queue entry lives unless its process renews it. */
  private readonly waiterLease: number;

  /**
   * @throws {LockOptionsError} for an invalid option (checked now, before any connection).
   */
  constructor(options: PostgresLockProviderOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new LockOptionsError(providerOptionsMessage('PostgresLockProvider', providerOptionsExamples.postgres));
    }
    const {
      connection,
      tableName = DEFAULT_POSTGRES_LOCK_TABLE,
      commandTimeout = DEFAULT_COMMAND_TIMEOUT,
      createTable = true,
      prepareStatements = true,
      prune,
    } = options;
    if (!(typeof connection === 'string' || (typeof connection === 'object' && connection !== null))) {
      throw new LockOptionsError(
        optionMessage('PostgresLockProvider', 'connection', expected.postgresConnection, connection),
      );
    }
    assertDuration(commandTimeout, 'commandTimeout', 'PostgresLockProvider', false);
    for (const [option, value] of [
      ['createTable', createTable],
      ['prepareStatements', prepareStatements],
    ] as const) {
      if (typeof value !== 'boolean')
        throw new LockOptionsError(optionMessage('PostgresLockProvider', option, expected.boolean, value));
    }
    assertPostgresConnection(connection, 'PostgresLockProvider');
    const pruneSettings = postgresLockPruneSettings(prune);
    this.tables = postgresLockTables(tableName);
    this.sql = postgresLockStatements(this.tables);
    this.tableName = tableName;
    this.commandTimeout = commandTimeout;
    this.waiterLease = Math.min(MAX_DURATION_MS, Math.max(5_000, 2 * commandTimeout));
    this.database = new PostgresLockDatabase({
      connection,
      tables: this.tables,
      prepared: prepareStatements ? this.sql : {},
      createTable,
      commandTimeout,
    });
    this.pruner = new PostgresLockPruner(
      this.database,
      this.tables,
      this.sql,
      pruneSettings,
      new Logger(PostgresLockProvider.name),
    );
    this.holds = new PostgresLockHolds(this.database, this.tables, this.sql, this.waiterLease);
    this.waiting = new PostgresLockWaiting(this.database, this.tables, this.sql, this.holds, this.waiterLease);
  }

  /**
   * The SQL that creates the tables (idempotent: `IF NOT EXISTS`), for teams
   * whose migrations own the schema. Use it with `createTable: false`.
   *
   * @example
   * ```ts
   * await queryRunner.query(PostgresLockProvider.schemaSql('nest_locks'));
   * ```
   */
  static schemaSql(tableName: string = DEFAULT_POSTGRES_LOCK_TABLE): string {
    return schemaSql(postgresLockTables(tableName));
  }

  /**
   * One statement when the lock is free (or its lease ended, or it admits one
   * more holder). A waiting call takes a ticket in the waiters table and is
   * woken by NOTIFY, by a holder's lease end, or after the listen connection
   * reconnected.
   * @throws {LockOptionsError} when the key is held or awaited with another `limit`.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const { key, owner, ttl } = request;
    if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
      // The primary-key index takes about 2.7 kB per entry; fail clearly rather than with an index error.
      throw new LockOptionsError(keyTooLongMessage(key, Buffer.byteLength(key), MAX_KEY_BYTES));
    }
    const shared = request.mode === 'shared';
    const limit = shared || request.limit === undefined ? 1 : Math.max(1, Math.floor(request.limit));
    const plain = !shared && limit === 1;
    const fences = plain && request.fences !== undefined && request.fences > 1 ? Math.floor(request.fences) : 1;
    // A release may grant a plain waiter directly: with a lease of at most the waiter lease (a waiter whose process died
    // holds the line no longer) when the engine renews it to the ttl; else only when the whole ttl is that short.
    const direct = !plain
      ? null
      : request.renews === true
        ? Math.min(ttl, this.waiterLease)
        : ttl <= this.waiterLease
          ? ttl
          : null;
    const ask: PostgresLockAsk = { key, owner, ttl, fences, shared, limit, direct };
    const wait = request.wait && !request.signal?.aborted && request.waitTimeout !== 0;
    if (!wait) {
      const once = this.reached(await this.database.bounded('acquire', key, () => this.holds.attempt(ask, null)));
      return once.token === null ? null : { fencingToken: once.token, fences };
    }
    return this.reached(await this.waiting.acquire(request, ask));
  }

  /**
   * Sets the owner's lease (of a plain lock, or its own permit or shared hold)
   * to end `ttl` ms from now, on the database's clock; a shorter lease
   * notifies waiters.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async extend(key: string, owner: string, ttl: number): Promise<boolean> {
    return this.reached(await this.holds.extend(key, owner, ttl));
  }

  /**
   * {@inheritDoc LockProvider.coalesce}
   * A release and this process's next waiter's queueing statement go as one
   * statement: the ticket follows the release at once, one commit for both.
   */
  coalesce<T>(send: () => T): T {
    return this.database.coalesce(send);
  }

  /**
   * Frees the owner's hold (the row stays, with its fencing counter; other
   * holders keep theirs) and sends NOTIFY in the same statement.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async release(key: string, owner: string): Promise<boolean> {
    return this.reached(await this.waiting.release(key, owner));
  }

  /**
   * Deletes the rows of locks whose lease ended more than `olderThanMs` ago
   * (default one hour; at least one minute), in batches of 5 000, and
   * answers how many. The table keeps one row per lock name ever used (the
   * row carries the name's fencing counter); the provider prunes in the
   * background by itself (the `prune` option), so call this only with
   * `prune: false` or to prune now. A name whose row was deleted starts
   * again from the database clock in microseconds, which is ahead of every
   * token the old row gave: only rows whose counter is behind the clock by
   * `olderThanMs` are deleted, so this holds unless the database clock is set
   * back by more than that. Rows with a live holder or a live waiter, and
   * rows a lock call has locked right now, are never deleted.
   *
   * @example
   * ```ts
   * const deleted = await provider.prune(24 * 3_600_000); // unused for a day
   * ```
   * @throws {LockOptionsError} for an `olderThanMs` under 60 000, over `MAX_DURATION_MS` or not a finite number.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout` (per batch).
   */
  async prune(olderThanMs: number = 3_600_000): Promise<number> {
    return this.reached(await this.pruner.prune(olderThanMs));
  }

  /**
   * {@inheritDoc LockProvider.inspect} Reads the locks table in name order,
   * `request.limit` names a page, each with all its holders.
   */
  async inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    const rows = this.reached(
      await this.database.bounded('inspect', undefined, () =>
        this.database.query(this.sql.inspect, [request.prefix, request.cursor ?? null, request.limit + 1]),
      ),
    );
    const names = [...new Set(rows.map((row) => row.name as string))];
    const more = names.length > request.limit;
    const locks = rows
      .filter((row) => !more || row.name !== names[request.limit])
      .map((row): StoredLock => ({
        key: row.name as string,
        owner: row.owner as string,
        permits: Number(row.permits),
        mode: row.mode === 'shared' ? 'shared' : 'exclusive',
        fencingToken: Number(row.token),
        remainingMs: Number(row.remaining_ms),
        ...(row.acquired_ms === null ? {} : { heldSince: Math.round(Number(row.acquired_ms)) }),
        waiters: Number(row.waiters),
      }));
    return more ? { locks, cursor: names[request.limit - 1] } : { locks };
  }

  /**
   * {@inheritDoc LockProvider.holder}
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async holder(key: string): Promise<LockHolder | null> {
    const rows = this.reached(
      await this.database.bounded('holder', key, () => this.database.query(this.sql.holder, [key])),
    );
    return rows.length === 0 ? null : lockHolder(String(rows[0].owner), Number(rows[0].ms));
  }

  /**
   * Round trip of a read of the lock table, in ms (so a missing table fails it).
   * @throws {LockStoreError} when PostgreSQL does not answer within `commandTimeout`.
   */
  async ping(): Promise<number> {
    const started = performance.now();
    // Reads the lock table too: a table that is missing (createTable: false) fails the ping, not the first lock.
    await this.database.bounded('ping', undefined, () => this.database.query(pingSql(this.tables)));
    return this.reached(performance.now() - started);
  }

  /**
   * Stops the background pruning (a batch in progress ends first), resolves
   * queued waiters `null` (and removes their tickets), waits for calls in
   * flight, ends the LISTEN connection, and ends the pool if the provider
   * opened it (a `pg.Pool` you passed stays open). Calls after it fail with
   * {@link LockStoreError}.
   */
  async close(): Promise<void> {
    if (this.database.closed) return;
    this.database.shutDown();
    const pruning = this.pruner.stop();
    await this.waiting.close();
    await pruning;
    await this.database.end();
  }

  /**
   * {@inheritDoc LockProvider.extendMany}
   * One statement (an `UPDATE` from arrays) for all the plain locks, and one
   * for the shared holds and permits granted here, sent together.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  extendMany(locks: readonly LockExtension[]): Promise<boolean[]> {
    return this.holds.extendMany(locks).then((answer) => this.reached(answer));
  }

  /** What follows a call that reached the tables: queue entries whose removal failed are removed now, and the background pruning starts (once). */
  private reached<T>(answer: T): T {
    this.waiting.dropOrphans();
    this.pruner.start();
    return answer;
  }
}
