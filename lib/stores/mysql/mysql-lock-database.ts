import type { Pool, PoolConnection, PoolOptions, ResultSetHeader, RowDataPacket } from 'mysql2';
import { endpointOf, mysqlCause, mysqlLockTableMissingHint, storeCauses } from '../../errors/lock.messages.js';
import { loadOptionalPeer } from '../optional-peer.js';
import { BoundedSqlCalls } from '../sql/bounded-sql-calls.js';
import type { MysqlConnection } from './mysql-lock-options.interface.js';
import { schemaStatements, type MysqlLockStatements, type MysqlLockTables } from './mysql-lock-tables.js';

type Mysql2Module = typeof import('mysql2');

/** @internal */
export interface MysqlLockDatabaseOptions {
  readonly connection: MysqlConnection;
  readonly tables: MysqlLockTables;
  /** The statements of the tables' creation: the read of both that fails when one is missing (`ping`), and the schema lock. */
  readonly sql: Pick<MysqlLockStatements, 'ping' | 'schemaLock' | 'schemaUnlock'>;
  readonly createTable: boolean;
  readonly commandTimeout: number;
}

/** The core (callback) pool of a `mysql2` pool, or of the promise wrapper around one. */
function corePool(connection: MysqlConnection): Pool | undefined {
  const c = connection as { execute?: unknown; getConnection?: unknown; pool?: Pool; promise?: unknown };
  if (typeof c !== 'object' || c === null || typeof c.getConnection !== 'function') return undefined;
  return typeof c.promise === 'function' ? (connection as Pool) : c.pool;
}

/** Where the provider connects, for messages: `host:port` and the database, never the password. */
function mysqlTarget(connection: MysqlConnection): { at: string; database: string | undefined } {
  const pool = corePool(connection) as (Pool & { config?: { connectionConfig?: PoolOptions } }) | undefined;
  const given: PoolOptions = pool
    ? (pool.config?.connectionConfig ?? {})
    : typeof connection === 'string'
      ? { uri: connection }
      : (connection as PoolOptions);
  let { host, port, database } = given;
  const m =
    typeof given.uri === 'string'
      ? /^[a-z0-9+]+:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d+))?(?:\/([^?#]*))?/i.exec(given.uri)
      : null;
  if (m) {
    host = m[1] || host;
    port = m[2] === undefined ? port : Number(m[2]);
    database = m[3] ? decodeURIComponent(m[3]) : database;
  }
  return { at: endpointOf(host ?? 'localhost', port ?? 3306), database };
}

/** The MySQL error number of a `mysql2` error. */
const errno = (err: unknown): number | undefined => (err as { errno?: number } | null)?.errno;

/** Runs a prepared statement on one connection, within `timeout` ms: its result (rows, or the OK packet). */
const query = (conn: PoolConnection, sql: string, values: unknown[], timeout: number): Promise<unknown> =>
  new Promise((resolve, reject) =>
    conn.execute({ sql, values, timeout }, (err: unknown, r: unknown) => (err ? reject(err) : resolve(r))),
  );

/** MySQL's ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR, ER_TABLE_EXISTS_ERROR, ER_LOCK_DEADLOCK. */
const NO_SUCH_TABLE = 1146;
const BAD_FIELD = 1054;
const TABLE_EXISTS = 1050;
const DEADLOCK = 1213;

/**
 * The lock store's access to MySQL: the pool (the app's, or one it opens from
 * the options and ends), the tables created on first use when a read finds
 * them missing, every call bounded by `commandTimeout`, and every failure a
 * {@link LockStoreError} that names its cause.
 * @internal
 */
export class MysqlLockDatabase {
  /** The bound on every call, in ms. */
  readonly commandTimeout: number;
  /** Whether the pool is the provider's own (ended on close), not the app's. */
  readonly ownsPool: boolean;

  private readonly connection: MysqlConnection;
  private readonly tables: MysqlLockTables;
  private readonly sql: MysqlLockDatabaseOptions['sql'];
  private readonly createTable: boolean;
  private pool?: Pool;
  private schema?: Promise<void>;
  private isClosed = false;
  private readonly calls: BoundedSqlCalls;

  constructor(options: MysqlLockDatabaseOptions) {
    this.connection = options.connection;
    this.tables = options.tables;
    this.sql = options.sql;
    this.createTable = options.createTable;
    this.commandTimeout = options.commandTimeout;
    this.calls = new BoundedSqlCalls({
      store: 'MySQL',
      commandTimeout: options.commandTimeout,
      at: () => mysqlTarget(this.connection).at,
      cause: (err) => mysqlCause(mysqlTarget(this.connection).at, mysqlTarget(this.connection).database, err),
      explain: (err) => this.cause(err),
      closedTo: (operation) =>
        this.isClosed && operation !== 'close' && operation !== 'release' && operation !== 'dequeue',
    });
    this.ownsPool = corePool(options.connection) === undefined;
  }

  /** Closed: calls other than `close`, `release` and `dequeue` fail. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Refuses calls from now on (but `close`, `release` and `dequeue`). */
  shutDown(): void {
    this.isClosed = true;
  }

  /** Ends the pool if the provider opened it (an app's pool stays open). */
  async end(): Promise<void> {
    const pool = this.pool;
    if (this.ownsPool && pool) await new Promise<void>((resolve) => pool.end(() => resolve()));
  }

  /** Runs a statement that writes: its OK packet (affected rows, insert id). One retry after a deadlock (the server rolled it back). */
  async write(sql: string, values: unknown[]): Promise<ResultSetHeader> {
    try {
      return (await this.execute(sql, values)) as ResultSetHeader;
    } catch (err) {
      if (errno(err) !== DEADLOCK) throw err;
      return (await this.execute(sql, values)) as ResultSetHeader;
    }
  }

  /** Runs a statement that reads: its rows. */
  async read(sql: string, values: unknown[] = []): Promise<RowDataPacket[]> {
    return (await this.execute(sql, values)) as RowDataPacket[];
  }

  /**
   * Runs `fn` in one transaction on one connection (`run` sends its
   * statements), committed when `fn` resolves and rolled back when it throws.
   * One retry after a deadlock (the server rolled it back).
   */
  async transaction<T>(fn: (run: (sql: string, values: unknown[]) => Promise<unknown>) => Promise<T>): Promise<T> {
    try {
      return await this.once(fn);
    } catch (err) {
      if (errno(err) !== DEADLOCK) throw err;
      return this.once(fn);
    }
  }

  private async once<T>(fn: (run: (sql: string, values: unknown[]) => Promise<unknown>) => Promise<T>): Promise<T> {
    const pool = await this.ready();
    const conn = await new Promise<PoolConnection>((resolve, reject) =>
      pool.getConnection((err, c) => (err ? reject(err) : resolve(c))),
    );
    const run = (sql: string, values: unknown[]): Promise<unknown> => query(conn, sql, values, this.commandTimeout);
    // mysql2's own transaction calls (BEGIN, COMMIT, ROLLBACK), each bounded like a statement by the caller's bound.
    const step = (call: (cb: (err: unknown) => void) => void): Promise<void> =>
      new Promise((resolve, reject) => call((err) => (err ? reject(err) : resolve())));
    try {
      await step((cb) => conn.beginTransaction(cb));
      const result = await fn(run);
      await step((cb) => conn.commit(cb));
      conn.release();
      return result;
    } catch (err) {
      // A connection whose rollback fails (gone, or still busy after a timeout) is not given back to the pool.
      await step((cb) => conn.rollback(cb)).then(
        () => conn.release(),
        () => conn.destroy(),
      );
      throw err;
    }
  }

  /** Whether the pool was taken or opened (by a first call): until then there is nothing to prune. */
  get opened(): boolean {
    return this.pool !== undefined;
  }

  /**
   * Runs `fn` on one connection held for its whole run (`run` sends a
   * statement on it, within `commandTimeout`), for work that needs a session,
   * such as a named lock. Getting the connection is bounded as a call
   * `operation`; the connection goes back to the pool after, or is destroyed
   * when `fn` failed (it may be busy still, or hold a session lock).
   */
  async pinned<T>(
    operation: string,
    fn: (run: (sql: string, values: unknown[]) => Promise<unknown>) => Promise<T>,
  ): Promise<T> {
    const conn = await this.bounded(operation, undefined, async () => {
      const pool = await this.ready();
      return new Promise<PoolConnection>((resolve, reject) =>
        pool.getConnection((err, c) => (err ? reject(err) : resolve(c))),
      );
    });
    const run = (sql: string, values: unknown[]): Promise<unknown> =>
      this.bounded(operation, undefined, () => query(conn, sql, values, this.commandTimeout));
    try {
      const result = await fn(run);
      conn.release();
      return result;
    } catch (err) {
      conn.destroy();
      throw err;
    }
  }

  /**
   * Runs `fn` within `commandTimeout`, and turns every failure into a
   * {@link LockStoreError}: a dead database is never reported as a held lock.
   */
  bounded<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    return this.calls.run(operation, key, fn);
  }

  /** What went wrong, in words: the `mysql2` error's cause, and what to do about a missing lock table. */
  private cause(err: unknown): string {
    const target = mysqlTarget(this.connection);
    const hint =
      errno(err) === NO_SUCH_TABLE || errno(err) === BAD_FIELD ? mysqlLockTableMissingHint(this.tables.raw) : '';
    return `${mysqlCause(target.at, target.database, err)}${hint}`;
  }

  private async execute(sql: string, values: unknown[]): Promise<unknown> {
    const pool = await this.ready();
    return new Promise((resolve, reject) => {
      pool.execute({ sql, values, timeout: this.commandTimeout }, (err: unknown, result: unknown) =>
        err ? reject(err) : resolve(result),
      );
    });
  }

  /** The pool, with the tables created (once, on first use, when missing). */
  private async ready(): Promise<Pool> {
    if (this.isClosed && this.ownsPool && !this.pool) throw new Error(storeCauses.providerClosed);
    if (!this.pool) {
      const given = corePool(this.connection);
      if (given) {
        this.pool = given;
      } else {
        const mysql = loadOptionalPeer<Mysql2Module>('mysql2', 'MysqlLockProvider');
        const options: PoolOptions =
          typeof this.connection === 'string' ? { uri: this.connection } : { ...(this.connection as PoolOptions) };
        // Lock statements are short: a few connections per instance serve many callers.
        const pool = mysql.createPool({
          connectionLimit: 5,
          connectTimeout: this.commandTimeout,
          enableKeepAlive: true,
          ...options,
        });
        // An idle connection the server dropped must not crash the app; the pool replaces it.
        pool.on('connection', (c) => c.on('error', () => undefined));
        this.pool = pool;
      }
    }
    if (this.createTable)
      await (this.schema ??= this.ensureSchema(this.pool).catch((err: unknown) =>
        Promise.reject(this.forgetSchema(err)),
      ));
    return this.pool;
  }

  /** A failed table creation is tried again on the next call. */
  private forgetSchema(err: unknown): unknown {
    this.schema = undefined;
    return err;
  }

  /**
   * Creates the tables unless a read finds them in place (every start after
   * the first): no DDL runs while they are there. Instances that start
   * together take turns by `GET_LOCK` on one connection, for the creation
   * only (where `GET_LOCK` is not to be had, behind a proxy or on Galera,
   * they go on without it: a table another one created meanwhile is no error).
   */
  private async ensureSchema(pool: Pool): Promise<void> {
    const promisePool = pool.promise();
    if (await this.tablesPresent((sql) => promisePool.query({ sql, timeout: this.commandTimeout }))) return;
    const conn = await promisePool.getConnection();
    let locked = false;
    try {
      const wait = Math.max(1, Math.floor(this.commandTimeout / 1000));
      locked = await conn.query<RowDataPacket[]>(this.sql.schemaLock, [this.tables.raw, wait]).then(
        ([rows]) => Number(rows[0]?.ok) === 1,
        () => false,
      );
      // Another instance may have created them while this one waited for its turn.
      if (locked && (await this.tablesPresent((sql) => conn.query({ sql, timeout: this.commandTimeout })))) return;
      for (const statement of schemaStatements(this.tables)) {
        await conn.query({ sql: statement, timeout: this.commandTimeout }).catch((err: unknown) => {
          if (errno(err) !== TABLE_EXISTS) throw err;
        });
      }
    } finally {
      if (locked) await conn.query(this.sql.schemaUnlock, [this.tables.raw]).catch(() => undefined);
      conn.release();
    }
  }

  /** Whether a read of both tables works, by `query` (a missing one fails it with ER_NO_SUCH_TABLE; any other failure is thrown). */
  private tablesPresent(query: (sql: string) => Promise<unknown>): Promise<boolean> {
    return query(this.sql.ping).then(
      () => true,
      (err: unknown) => {
        if (errno(err) === NO_SUCH_TABLE) return false;
        throw err;
      },
    );
  }
}
