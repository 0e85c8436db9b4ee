import { createHash } from 'node:crypto';
import type { Client, ClientConfig, Pool, PoolConfig, QueryResultRow } from 'pg';
import {
  endpointOf,
  lockTableMissingHint,
  lockTableOutdatedHint,
  lockTableNotCreatableHint,
  postgresCause,
  storeCauses,
} from '../../errors/lock.messages.js';
import { loadOptionalPeer } from '../optional-peer.js';
import { BoundedSqlCalls } from '../sql/bounded-sql-calls.js';
import type { PostgresConnection } from './postgres-lock-options.interface.js';
import { PostgresLockSchema } from './postgres-lock-schema.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';
import { PostgresLockPinnedClient } from './postgres-lock-pinned-client.js';
import { PostgresLockReleaseQueue } from './postgres-lock-release-queue.js';
import { postgresLockStatements } from './postgres-lock-statements.js';

type PgModule = typeof import('pg');

/** @internal */
export interface PostgresLockDatabaseOptions {
  readonly connection: PostgresConnection;
  readonly tables: PostgresLockTables;
  /** Statements to prepare, by operation; none with `prepareStatements: false`. */
  readonly prepared: Readonly<Record<string, string>>;
  readonly createTable: boolean;
  readonly commandTimeout: number;
}

const isPool = (c: unknown): c is Pool =>
  typeof c === 'object' &&
  c !== null &&
  typeof (c as Pool).query === 'function' &&
  typeof (c as Pool).connect === 'function';

/** Where the provider connects, for messages: `host:port` and the database, never the password (libpq's defaults where not given). */
function postgresTarget(connection: PostgresConnection): { at: string; database: string | undefined } {
  const given = (
    isPool(connection)
      ? ((connection as Pool & { options?: PoolConfig }).options ?? {})
      : typeof connection === 'string'
        ? { connectionString: connection }
        : connection
  ) as PoolConfig;
  let { host, port, database } = given as { host?: string; port?: number | string; database?: string };
  const m =
    typeof given.connectionString === 'string'
      ? /^[a-z]+:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d+))?(?:\/([^?#]*))?/i.exec(given.connectionString)
      : null;
  if (m) {
    host = m[1] || host;
    port = m[2] ?? port;
    database = m[3] ? decodeURIComponent(m[3]) : database;
  }
  host ??= process.env.PGHOST ?? 'localhost';
  port ??= process.env.PGPORT ?? 5432;
  return { at: endpointOf(host, port), database: database ?? process.env.PGDATABASE };
}

/**
 * The lock store's access to PostgreSQL: the pool (the app's, or one it opens
 * from the options and ends), the tables created on first use (by
 * {@link PostgresLockSchema}), every call
 * bounded by `commandTimeout`, and every failure a {@link LockStoreError}
 * that names its cause.
 * @internal
 */
export class PostgresLockDatabase {
  /** The bound on every call, in ms. */
  readonly commandTimeout: number;
  /** Whether the pool is the provider's own (ended on close), not the app's. */
  readonly ownsPool: boolean;

  private readonly connection: PostgresConnection;
  private readonly tables: PostgresLockTables;
  /** Creates the tables on first use (`createTable`), else undefined. */
  private readonly schema: PostgresLockSchema | undefined;
  /** Statement text → prepared statement name. */
  private readonly statementNames = new Map<string, string>();
  private pool?: Pool;
  /** The tables' creation on first use, once it started. */
  private schemaCreated?: Promise<void>;
  private poolEnded = false;
  private isClosed = false;
  private readonly calls: BoundedSqlCalls;
  /** Inside {@link coalesce}: the statements issued now share one connection, in order. */
  private pinned: PostgresLockPinnedClient | undefined;
  /** A coalesced release and queueing statement, sent as one. */
  private readonly releaseQueue: PostgresLockReleaseQueue;

  constructor(options: PostgresLockDatabaseOptions) {
    this.connection = options.connection;
    this.tables = options.tables;
    this.schema = options.createTable ? new PostgresLockSchema(options.tables, options.commandTimeout) : undefined;
    this.commandTimeout = options.commandTimeout;
    this.calls = new BoundedSqlCalls({
      store: 'PostgreSQL',
      commandTimeout: options.commandTimeout,
      at: () => postgresTarget(this.connection).at,
      cause: (err) => postgresCause(postgresTarget(this.connection).at, postgresTarget(this.connection).database, err),
      explain: (err) => this.cause(err),
      closedTo: (operation) => this.isClosed && operation !== 'close' && operation !== 'release',
    });
    this.ownsPool = !isPool(options.connection);
    // Named after their text: providers with other tables can share a pool (pg refuses one name for two texts).
    for (const [op, text] of Object.entries(options.prepared)) {
      this.statementNames.set(text, `nest_lock_${op}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`);
    }
    const sql = postgresLockStatements(options.tables);
    this.releaseQueue = new PostgresLockReleaseQueue(sql, this.statementNames.get(sql.releaseQueue));
  }

  /** Closed: calls other than `close` and `release` fail. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Whether a pool is in use (a call has been made). */
  get opened(): boolean {
    return this.pool !== undefined;
  }

  /** Refuses calls from now on (but `close` and `release`), and never opens a pool again. */
  shutDown(): void {
    this.isClosed = true;
  }

  /** Ends the pool if the provider opened it (an app's pool stays open). */
  async end(): Promise<void> {
    if (this.ownsPool) {
      this.poolEnded = true;
      await this.pool?.end().catch(() => undefined);
    }
  }

  /**
   * Runs one statement (prepared if it is one of the lock statements) and
   * answers its rows; of a text of several statements (no `values`: one
   * transaction), the last one's rows.
   */
  async query(text: string, values?: unknown[]): Promise<QueryResultRow[]> {
    const config = { name: this.statementNames.get(text), text, values, query_timeout: this.commandTimeout } as never;
    const pinned = this.pinned;
    const result = pinned ? await pinned.run(this.ready(), config) : await (await this.ready()).query(config);
    const last = (Array.isArray(result) ? result[result.length - 1] : result) as { rows: QueryResultRow[] };
    return last.rows;
  }

  /**
   * Runs `send` at once; the statements it issues (synchronously) run in that
   * order on one connection of the pool (see {@link PostgresLockPinnedClient}); a
   * release and the next waiter's queueing statement go as one.
   */
  coalesce<T>(send: () => T): T {
    if (this.pinned !== undefined) return send();
    const pinned = new PostgresLockPinnedClient(this.releaseQueue);
    this.pinned = pinned;
    try {
      return send();
    } finally {
      this.pinned = undefined;
      pinned.seal();
    }
  }

  /**
   * Runs `fn` within `commandTimeout`, and turns every failure into a
   * {@link LockStoreError}: a dead database is never reported as a held lock.
   */
  bounded<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    return this.calls.run(operation, key, fn);
  }

  /** A new client (not connected) with the pool's settings, for the LISTEN connection. */
  client(): Client {
    const pg = loadOptionalPeer<PgModule>('pg', 'PostgresLockProvider');
    const base: ClientConfig = this.ownsPool ? this.poolConfig() : this.appPoolConfig();
    return new pg.Client({ ...base, keepAlive: true, connectionTimeoutMillis: this.commandTimeout });
  }

  /** What went wrong, in words: the `pg` error's cause, and what to do about a missing lock table. */
  private cause(err: unknown): string {
    const target = postgresTarget(this.connection);
    const code = (err as { code?: unknown })?.code;
    const hint =
      code === '42P01'
        ? lockTableMissingHint(this.tables.raw)
        : code === '42703'
          ? lockTableOutdatedHint(this.tables.raw)
          : code === '42501' && (err as { duringSchema?: boolean }).duringSchema === true
            ? lockTableNotCreatableHint(this.tables.raw)
            : '';
    return `${postgresCause(target.at, target.database, err)}${hint}`;
  }

  /** The pool, with the tables created (once, on first use). */
  private async ready(): Promise<Pool> {
    // After close, never open a new pool, nor use the one it ended.
    if (this.isClosed && (!this.pool || this.poolEnded)) throw new Error(storeCauses.providerClosed);
    if (!this.pool) {
      if (isPool(this.connection)) {
        this.pool = this.connection;
      } else {
        const pg = loadOptionalPeer<PgModule>('pg', 'PostgresLockProvider');
        const pool = new pg.Pool(this.poolConfig());
        // An idle connection the server dropped must not crash the app; the pool replaces it.
        pool.on('error', () => undefined);
        this.pool = pool;
      }
    }
    const pool = this.pool;
    if (this.schema) {
      this.schemaCreated ??= this.schema.ensure(pool).catch((err: unknown) => {
        this.schemaCreated = undefined; // try again on the next call
        throw err;
      });
      await this.schemaCreated;
    }
    return pool;
  }

  /** The app pool's connection settings, for the listen connection (pg-pool keeps the password non-enumerable). */
  private appPoolConfig(): ClientConfig {
    const options = (this.connection as Pool & { options?: ClientConfig }).options ?? {};
    return { ...options, password: options.password };
  }

  private poolConfig(): PoolConfig {
    const given: PoolConfig =
      typeof this.connection === 'string'
        ? { connectionString: this.connection }
        : { ...(this.connection as PoolConfig) };
    return {
      ...given,
      // Lock statements are short: a few connections per instance serve many callers (plus one for LISTEN).
      max: given.max ?? 5,
      connectionTimeoutMillis: given.connectionTimeoutMillis ?? this.commandTimeout,
      // A little under the bound, so the server cancels a stuck statement (and says so) before the client gives up on it.
      statement_timeout: given.statement_timeout ?? Math.max(1, Math.floor(this.commandTimeout * 0.9)),
      keepAlive: given.keepAlive ?? true,
      application_name: given.application_name ?? 'nest-lock',
    };
  }
}
