import { loadOptionalPeer } from '../optional-peer.js';
import { DEFAULT_COMMAND_TIMEOUT } from '../../contract/lock.constants.js';
import { createHash } from 'node:crypto';
import type { Client, ClientConfig, Pool, PoolConfig, QueryResultRow } from 'pg';
import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import { assertPostgresConnection } from '../connection-options.validation.js';
import {
  endpointOf,
  keyTooLongMessage,
  lockTableMissingHint,
  lockTableNotCreatableHint,
  noAnswerDetail,
  optionMessage,
  peerMissingMessage,
  postgresCause,
  providerClosedDetail,
  providerOptionsMessage,
  tableNameMessage,
} from '../../errors/lock.messages.js';
import { LockProvider, lockHolder, type LockAcquireRequest, type LockGrant, type LockHolder } from '../../contract/lock-provider.js';
import type { LockInspectPage, LockInspectRequest, StoredLock } from '../../contract/stored-lock.interface.js';

/**
 * How {@link PostgresLockProvider} reaches PostgreSQL: a `pg.Pool` the app
 * already has (the provider uses it and leaves it open on close), or a
 * connection string / `pg.PoolConfig` (the provider opens its own pool and
 * ends it on close).
 */
export type PostgresConnection = string | PoolConfig | Pool;

/** Options of {@link PostgresLockProvider}. */
export interface PostgresLockProviderOptions {
  /** A `pg.Pool` (yours, left open), or a connection string / `PoolConfig` (a pool the provider owns and ends). */
  connection: PostgresConnection;
  /**
   * The lock table, optionally schema-qualified (`'locks.nest_locks'`). A
   * second table, `<tableName>_waiters`, holds the FIFO queue of waiters.
   * Letters, digits and `_` only; at most 63 characters in all. Default `'nest_locks'`.
   */
  tableName?: string;
  /**
   * Upper bound in ms on every call to the database (connect, statement,
   * answer). Past it the call fails with {@link LockStoreError}. Default `2000`.
   */
  commandTimeout?: number;
  /**
   * Create the tables (`CREATE TABLE IF NOT EXISTS`) on first use. Default
   * `true`. Set `false` when migrations own the schema; take the SQL from
   * {@link PostgresLockProvider.schemaSql}.
   */
  createTable?: boolean;
  /**
   * Run the lock statements as named prepared statements, planned once per
   * connection (about twice as fast as planning each call). Default `true`.
   * Set `false` behind a pooler that cannot keep prepared statements
   * (PgBouncer in transaction mode before 1.21).
   */
  prepareStatements?: boolean;
}

/** Default lock table of {@link PostgresLockProvider}. */
export const DEFAULT_POSTGRES_LOCK_TABLE = 'nest_locks';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longest lock key (prefix included), in UTF-8 bytes: well under what a btree index entry may hold. */
const MAX_KEY_BYTES = 2_000;
const WAITERS_SUFFIX = '_waiters';
const INDEX_SUFFIX = '_waiters_name_idx';

interface TableNames {
  /** As given: also the NOTIFY channel. */
  readonly raw: string;
  readonly locks: string;
  readonly waiters: string;
  readonly index: string;
}

function tableNames(tableName: unknown): TableNames {
  const where = 'PostgresLockProvider';
  if (typeof tableName !== 'string') {
    throw new LockOptionsError(optionMessage(where, 'tableName', 'a string', tableName));
  }
  const parts = tableName.split('.');
  const table = parts[parts.length - 1];
  if (parts.length > 2 || !parts.every((p) => IDENT.test(p)) || tableName.length > 63 || table.length + INDEX_SUFFIX.length > 63) {
    throw new LockOptionsError(tableNameMessage(where, tableName, 63 - INDEX_SUFFIX.length));
  }
  const quote = (p: string): string => `"${p}"`;
  const schema = parts.length === 2 ? `${quote(parts[0])}.` : '';
  return {
    raw: tableName,
    locks: schema + quote(table),
    waiters: schema + quote(table + WAITERS_SUFFIX),
    index: quote(table + INDEX_SUFFIX),
  };
}

function schemaSqlFor(n: TableNames): string {
  return `CREATE TABLE IF NOT EXISTS ${n.locks} (
  name          text        PRIMARY KEY,
  owner         text,
  fencing_token bigint      NOT NULL,
  expires_at    timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ${n.waiters} (
  ticket     bigserial   PRIMARY KEY,
  name       text        NOT NULL,
  owner      text        NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${n.index} ON ${n.waiters} (name, ticket);
`;
}

/**
 * The SQL that creates the default tables (`nest_locks`, `nest_locks_waiters`),
 * for migrations; same as `PostgresLockProvider.schemaSql()`.
 */
export const POSTGRES_LOCK_SCHEMA_SQL: string = schemaSqlFor(tableNames(DEFAULT_POSTGRES_LOCK_TABLE));

/** The statements of one provider, built once from its table names. */
function statements(n: TableNames) {
  const ms = `* interval '1 millisecond'`;
  return {
    /*
     * Acquire, in one statement: insert the row, or take over a row that is
     * released (owner NULL) or whose lease ended, unless a live waiter with
     * an earlier ticket is queued for the name (FIFO across processes). A
     * granted waiter leaves the queue in the same statement. When not
     * granted, the answer says when to look again: the holder's remaining
     * lease, else the lease of the earliest waiter ahead (it may have died).
     * `mine` is the token when this owner already holds the row: a retry
     * after an error whose first attempt had committed.
     * A first attempt that will wait ($5: the queue entry's lease) takes its
     * ticket in the same statement when it is not granted; a new ticket is
     * greater than every one the statement sees, so it queues behind all of them.
     * Every time is the database's clock (clock_timestamp()), never the app's.
     * A grant draws a block of $6 fencing tokens and answers the first (the
     * engine hands the lock to other callers of its process with the rest).
     * A new row's counter starts from the database clock in microseconds, so
     * that a row pruned long ago (see `prune`) comes back with greater
     * tokens: a counter gains at most 16 per grant, far less than one per
     * microsecond, so it stays behind the clock.
     */
    acquire: `WITH ahead AS (
  SELECT count(*) AS n, min(w.expires_at) AS soonest FROM ${n.waiters} w
  WHERE w.name = $1 AND w.expires_at > clock_timestamp() AND ($4::bigint IS NULL OR w.ticket < $4::bigint)
), granted AS (
  INSERT INTO ${n.locks} AS l (name, owner, fencing_token, expires_at)
  SELECT $1, $2, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + $6::bigint - 1, clock_timestamp() + $3::float8 ${ms}
  FROM ahead WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
    SET owner = EXCLUDED.owner, fencing_token = l.fencing_token + $6::bigint, expires_at = EXCLUDED.expires_at
    WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp()
  RETURNING l.fencing_token
), dequeued AS (
  DELETE FROM ${n.waiters} w WHERE $4::bigint IS NOT NULL AND w.ticket = $4::bigint AND EXISTS (SELECT 1 FROM granted)
), enqueued AS (
  INSERT INTO ${n.waiters} (name, owner, expires_at)
  SELECT $1, $2, clock_timestamp() + $5::float8 ${ms} WHERE $5::float8 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM granted)
  RETURNING ticket
), pruned AS (
  DELETE FROM ${n.waiters} w WHERE $5::float8 IS NOT NULL AND w.name = $1 AND w.expires_at < clock_timestamp() - interval '1 minute'
)
SELECT (SELECT fencing_token - $6::bigint + 1 FROM granted)::float8 AS token, (SELECT ticket::text FROM enqueued) AS ticket,
  (SELECT CASE WHEN l.owner = $2 AND l.expires_at > clock_timestamp() THEN l.fencing_token - $6::bigint + 1 END FROM ${n.locks} l WHERE l.name = $1)::float8 AS mine,
  (SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
     THEN extract(epoch FROM l.expires_at - clock_timestamp()) * 1000 END FROM ${n.locks} l WHERE l.name = $1)::float8 AS held_ms,
  (SELECT extract(epoch FROM ahead.soonest - clock_timestamp()) * 1000 FROM ahead)::float8 AS ahead_ms`,
    /*
     * Extend. When it shortens the lease (`holdAtLeast` on release), waiters
     * are told, so that they look again at the new end instead of the old one.
     */
    extend: `WITH old AS (
  SELECT expires_at FROM ${n.locks} WHERE name = $1 AND owner = $2 AND expires_at > clock_timestamp() FOR UPDATE
), u AS (
  UPDATE ${n.locks} l SET expires_at = clock_timestamp() + $3::float8 ${ms} FROM old
  WHERE l.name = $1 AND l.owner = $2 RETURNING l.expires_at < old.expires_at AS shorter
)
SELECT CASE WHEN u.shorter THEN pg_notify($4, ':' || $1) END IS NULL AS ok FROM u`,
    /*
     * Release keeps the row, with owner NULL: the row carries the name's
     * fencing counter, so the next grant's token is still greater than every
     * earlier one. The cost is one small row per lock name in use; `prune`
     * deletes rows that ended long ago (their names start again from the
     * clock). NOTIFY is sent in the same statement, so waiters (in every
     * process) are woken when the release commits.
     *
     * Payloads are `<ticket>,<ms>:<name>`: the first live ticket in line and
     * the ms left of its queue entry's lease, so that only the process
     * holding it (or an earlier one) asks again, not every waiting process;
     * the others look again when that entry would lapse (its waiter may have
     * died). An empty `<ticket>,<ms>` wakes every process.
     */
    release: `WITH r AS (
  UPDATE ${n.locks} SET owner = NULL WHERE name = $1 AND owner = $2 RETURNING name, expires_at > clock_timestamp() AS live
), nxt AS (
  SELECT w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint AS next
  FROM ${n.waiters} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() ORDER BY w.ticket LIMIT 1
)
SELECT r.live, nxt.next, pg_notify($3, coalesce(nxt.next, '') || ':' || r.name) IS NULL AS notified FROM r LEFT JOIN nxt ON true`,
    /* A waiter that leaves (timeout, abort, close) wakes the next in line, which may be in another process. */
    dequeue: `WITH d AS (DELETE FROM ${n.waiters} WHERE ticket = ANY($1::bigint[]) RETURNING name)
SELECT pg_notify($2, coalesce((
  SELECT w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint FROM ${n.waiters} w
  WHERE w.name = x.name AND w.expires_at > clock_timestamp() AND w.ticket <> ALL($1::bigint[]) ORDER BY w.ticket LIMIT 1
), '') || ':' || x.name) IS NULL
FROM (SELECT DISTINCT name FROM d) x`,
    /*
     * Deletes a batch of rows whose lease ended more than $1 ms ago (released
     * or abandoned: nobody holds them, and no live waiter is queued, or it
     * would have taken them), and the stale queue entries of any name. Only
     * rows whose counter is behind the clock (in microseconds) by as much:
     * the row that replaces one then starts above every token it gave, even
     * if the clock is set back by less than $1 ms. (A counter gains one block
     * per grant, far slower than the clock; a row whose counter is ahead
     * stays.)
     */
    /*
     * Inspect: one page of the held locks under a prefix ($1), after the
     * cursor ($2), in name order (the primary key), with the live waiters.
     */
    inspect: `SELECT l.name, l.owner, l.fencing_token::float8 AS token,
  (extract(epoch FROM l.expires_at - clock_timestamp()) * 1000)::float8 AS remaining_ms,
  (SELECT count(*) FROM ${n.waiters} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())::int AS waiters
FROM ${n.locks} l
WHERE l.name >= $1 AND starts_with(l.name, $1) AND ($2::text IS NULL OR l.name > $2::text)
  AND l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
ORDER BY l.name LIMIT $3::int`,
    prune: `WITH gone AS (
  DELETE FROM ${n.locks} WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM ${n.locks} WHERE expires_at < clock_timestamp() - $1::float8 ${ms}
      AND fencing_token < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - ($1::float8 * 1000)::bigint
    LIMIT $2::int))
  RETURNING 1
), stale AS (
  DELETE FROM ${n.waiters} WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM ${n.waiters} WHERE expires_at < clock_timestamp() - interval '1 minute' LIMIT $2::int))
)
SELECT count(*)::int AS n FROM gone`,
    /* Who holds the lock now (a live lease), for `holder()`. */
    holder: `SELECT owner, extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS ms FROM ${n.locks}
WHERE name = $1 AND owner IS NOT NULL AND expires_at > clock_timestamp()`,
    heartbeat: `UPDATE ${n.waiters} SET expires_at = clock_timestamp() + $2::float8 ${ms} WHERE ticket = ANY($1::bigint[])`,
  };
}

interface Attempt {
  readonly token: number | null;
  /** The ticket taken when a first attempt that will wait was not granted. */
  readonly ticket: string | null;
  readonly mine: number | null;
  readonly heldMs: number | null;
  readonly aheadMs: number | null;
}

interface Waiter {
  readonly key: string;
  readonly owner: string;
  readonly ttl: number;
  /** Fencing tokens its grant reserves. */
  readonly fences: number;
  readonly ticket: string;
  done: boolean;
  /** It gave up (timeout, abort): its call answers `null` once its ticket is gone (or its grant released). */
  leaving?: boolean;
  readonly settle: (result: LockGrant | null | Error) => void;
}

interface Queue {
  /** Local waiters with a ticket, in ticket order: only the head asks the database. */
  readonly waiters: Waiter[];
  busy: boolean;
  again: boolean;
  failures: number;
  /** When the failed attempt was sent: if it committed after all, the lease started then. */
  failedAt?: number;
  wake?: ReturnType<typeof setTimeout>;
  /** When `wake` fires (performance.now() time). */
  wakeAt?: number;
}

type PgModule = typeof import('pg');

const isPool = (c: unknown): c is Pool =>
  typeof c === 'object' && c !== null && typeof (c as Pool).query === 'function' && typeof (c as Pool).connect === 'function';

const message = (err: unknown): string => (err instanceof Error ? err.message || err.name : String(err));

/** Where the provider connects, for messages: `host:port` and the database, never the password (libpq's defaults where not given). */
function postgresTarget(connection: PostgresConnection): { at: string; database: string | undefined } {
  const given = (isPool(connection) ? ((connection as Pool & { options?: PoolConfig }).options ?? {}) : typeof connection === 'string' ? { connectionString: connection } : connection) as PoolConfig;
  let { host, port, database } = given as { host?: string; port?: number | string; database?: string };
  const m = typeof given.connectionString === 'string' ? /^[a-z]+:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d+))?(?:\/([^?#]*))?/i.exec(given.connectionString) : null;
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
 * and vanish with it. (`pg_advisory_xact_lock` serializes the table creation
 * only, inside its own transaction.)
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
  /** The bound on every database call, in ms. */
  readonly commandTimeout: number;
  /** The lock table as configured (also the NOTIFY channel). */
  readonly tableName: string;

  private readonly names: TableNames;
  private readonly sql: ReturnType<typeof statements>;
  /** Statement text → prepared statement name (empty with `prepareStatements: false`). */
  private readonly statementNames = new Map<string, string>();
  private readonly connection: PostgresConnection;
  private readonly ownsPool: boolean;
  private readonly createTable: boolean;
  /** How long a waiter's queue entry lives unless its process renews it. */
  private readonly waiterLease: number;

  private pool?: Pool;
  private schema?: Promise<void>;
  private closed = false;
  private poolEnded = false;
  private readonly queues = new Map<string, Queue>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Queueing statements in flight, per key (see `watching`). */
  private readonly watches = new Map<string, Set<{ notified: boolean }>>();
  /** Queue entries whose removal failed (database away): removed after the next call that succeeds. */
  private readonly orphans: string[] = [];

  private listener?: Client;
  private listening?: Promise<Client>;
  private reconnectTimer?: ReturnType<typeof setTimeout>;
  private reconnectDelay = 100;
  private heartbeat?: ReturnType<typeof setInterval>;
  /** The last error of a failed call (cleared by one that succeeds): the cause named when a later call times out. */
  private lastError: unknown;

  /**
   * @throws {LockOptionsError} for an invalid option (checked now, before any connection).
   */
  constructor(options: PostgresLockProviderOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new LockOptionsError(providerOptionsMessage('PostgresLockProvider', '{ connection: "postgres://user@host/db" }'));
    }
    const {
      connection,
      tableName = DEFAULT_POSTGRES_LOCK_TABLE,
      commandTimeout = DEFAULT_COMMAND_TIMEOUT,
      createTable = true,
      prepareStatements = true,
    } = options;
    if (!(typeof connection === 'string' || (typeof connection === 'object' && connection !== null))) {
      throw new LockOptionsError(optionMessage('PostgresLockProvider', 'connection', 'a pg.Pool, a connection string or a pg PoolConfig', connection));
    }
    if (typeof commandTimeout !== 'number' || !Number.isFinite(commandTimeout) || commandTimeout <= 0) {
      throw new LockOptionsError(optionMessage('PostgresLockProvider', 'commandTimeout', 'a finite number of milliseconds > 0', commandTimeout));
    }
    for (const [option, value] of [['createTable', createTable], ['prepareStatements', prepareStatements]] as const) {
      if (typeof value !== 'boolean') throw new LockOptionsError(optionMessage('PostgresLockProvider', option, 'true or false', value));
    }
    assertPostgresConnection(connection, 'PostgresLockProvider');
    this.names = tableNames(tableName);
    this.sql = statements(this.names);
    if (prepareStatements) {
      // Named after their text: providers with other tables can share a pool (pg refuses one name for two texts).
      for (const [op, text] of Object.entries(this.sql)) {
        this.statementNames.set(text, `nest_lock_${op}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`);
      }
    }
    this.tableName = tableName;
    this.connection = connection;
    this.ownsPool = !isPool(connection);
    this.createTable = createTable;
    this.commandTimeout = commandTimeout;
    this.waiterLease = Math.max(5_000, 2 * commandTimeout);
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
    return schemaSqlFor(tableNames(tableName));
  }

  /**
   * One statement when the lock is free (or its lease ended). A waiting call
   * takes a ticket in the waiters table and is woken by NOTIFY, by the
   * holder's lease end, or after the listen connection reconnected.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const { key, owner, ttl } = request;
    const fences = request.fences !== undefined && request.fences > 1 ? Math.floor(request.fences) : 1;
    if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
      // The primary-key index takes about 2.7 kB per entry; fail clearly rather than with an index error.
      throw new LockOptionsError(keyTooLongMessage(key, Buffer.byteLength(key), MAX_KEY_BYTES));
    }
    const wait = request.wait && !request.signal?.aborted && request.waitTimeout !== 0;
    if (!wait) {
      const once = await this.bounded('acquire', key, () => this.attempt(key, owner, ttl, fences, null));
      return once.token === null ? null : { fencingToken: once.token, fences };
    }
    // The statement that queues leaves at once, so the caller's place in line is its arrival. A first
    // wait opens the LISTEN connection meanwhile; a release committed before LISTEN took effect may not
    // be heard, so such a waiter looks again as soon as it listens.
    const watch = { notified: false };
    const cold = this.listener === undefined;
    const first = await this.bounded('acquire', key, async () => {
      this.watching(key, watch, true);
      try {
        const queueing = this.attempt(key, owner, ttl, fences, null, true);
        // (a cold LISTEN connection opens once the statement is on its way, so as not to hold it up)
        const listening = cold ? new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.listen()) : this.listen();
        const [queued, listened] = await Promise.allSettled([queueing, listening]);
        if (queued.status === 'rejected') throw queued.reason;
        if (listened.status === 'rejected') {
          // Cannot wait without LISTEN: give back what the statement got, then fail.
          if (queued.value.token !== null) await this.release(key, owner).catch(() => undefined);
          else if (queued.value.ticket !== null) await this.dropTicketsNow([queued.value.ticket]);
          throw listened.reason;
        }
        return queued.value;
      } finally {
        this.watching(key, watch, false);
      }
    });
    if (first.token !== null) return { fencingToken: first.token, fences };
    if (first.ticket === null) return null; // cannot happen: not granted means queued
    if (request.signal?.aborted || this.closed) {
      await this.dropTicketsNow([first.ticket]);
      return null;
    }
    return this.wait(request, fences, first.ticket, watch.notified || cold ? 0 : (first.heldMs ?? first.aheadMs ?? 50));
  }

  /** Notes NOTIFYs for `key` that arrive while a queueing statement is in flight (its waiter is not in the local queue yet). */
  private watching(key: string, watch: { notified: boolean }, on: boolean): void {
    let set = this.watches.get(key);
    if (on) {
      if (!set) this.watches.set(key, (set = new Set()));
      set.add(watch);
    } else if (set) {
      set.delete(watch);
      if (set.size === 0) this.watches.delete(key);
    }
  }

  /** A NOTIFY `<ticket>,<ms>:<key>` arrived. */
  private notified(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon < 0) return;
    const key = payload.slice(colon + 1);
    for (const watch of this.watches.get(key) ?? []) watch.notified = true;
    this.wake(key, payload.slice(0, colon));
  }

  /**
   * The lock `key` changed hands or its line moved; `next` is `<ticket>,<ms>`,
   * the first live ticket in line and what is left of its lease ('' for
   * everyone). The local head asks again if it is that ticket or before it.
   * A head further back only makes sure it looks again when that ticket's
   * lease would lapse, in case its waiter died.
   */
  private wake(key: string, next: string): void {
    const queue = this.queues.get(key);
    const head = queue?.waiters[0];
    if (!queue || !head) return;
    const [ticket, ms] = next.split(',');
    if (!ticket || !/^[0-9]+$/.test(ticket) || BigInt(head.ticket) <= BigInt(ticket)) {
      this.kick(key);
      return;
    }
    const lapse = Math.min(Number(ms) || this.waiterLease, this.waiterLease);
    if (!queue.busy && (queue.wakeAt === undefined || queue.wakeAt > performance.now() + lapse)) this.arm(key, queue, lapse);
  }

  /**
   * Sets the lease to end `ttl` ms from now, on the database's clock; a
   * shorter lease notifies waiters.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async extend(key: string, owner: string, ttl: number): Promise<boolean> {
    const rows = await this.bounded('extend', key, () => this.query(this.sql.extend, [key, owner, ttl, this.names.raw]));
    return rows.length > 0;
  }

  /**
   * Frees the row (it stays, with its fencing counter) and sends NOTIFY in
   * the same statement.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async release(key: string, owner: string): Promise<boolean> {
    const rows = await this.bounded('release', key, () => this.query(this.sql.release, [key, owner, this.names.raw]));
    // Our own waiters need not wait for the NOTIFY round trip.
    if (rows.length > 0) this.wake(key, (rows[0].next as string | null) ?? '');
    return rows.length > 0 && rows[0].live === true;
  }

  /**
   * Deletes the rows of locks whose lease ended more than `olderThanMs` ago
   * (default one hour; at least one minute), in batches of 5 000, and
   * answers how many. The table keeps one row per lock name ever used (the
   * row carries the name's fencing counter); with names made per request or
   * per entity, call this now and then, for example from a scheduled task.
   * A name whose row was deleted starts again from the database clock in
   * microseconds, which is ahead of every token the old row gave: only rows
   * whose counter is behind the clock by `olderThanMs` are deleted, so this
   * holds unless the database clock is set back by more than that.
   *
   * @example
   * ```ts
   * constructor(private readonly provider: LockProvider) {}
   *
   * @Cron('0 * * * *')
   * @Locked('lock-housekeeping', { onHeld: 'skip' })
   * async prune(): Promise<void> {
   *   if (this.provider instanceof PostgresLockProvider) await this.provider.prune();
   * }
   * ```
   * @throws {LockOptionsError} for an `olderThanMs` under 60 000 or not a finite number.
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout` (per batch).
   */
  async prune(olderThanMs: number = 3_600_000): Promise<number> {
    if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 60_000) {
      throw new LockOptionsError(optionMessage('PostgresLockProvider.prune', 'olderThanMs', 'a finite number of milliseconds >= 60000', olderThanMs));
    }
    const batch = 5_000;
    let total = 0;
    for (;;) {
      const rows = await this.bounded('prune', undefined, () => this.query(this.sql.prune, [olderThanMs, batch]));
      const n = Number(rows[0]?.n ?? 0);
      total += n;
      if (n < batch) return total;
    }
  }

  /** {@inheritDoc LockProvider.inspect} Reads the locks table in name order; grant times are not recorded. */
  async inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    const rows = await this.bounded('inspect', undefined, () => this.query(this.sql.inspect, [request.prefix, request.cursor ?? null, request.limit + 1]));
    const page = rows.slice(0, request.limit);
    const locks = page.map(
      (row): StoredLock => ({
        key: row.name as string,
        owner: row.owner as string,
        permits: 1,
        fencingToken: Number(row.token),
        remainingMs: Number(row.remaining_ms),
        waiters: Number(row.waiters),
      }),
    );
    return rows.length > page.length ? { locks, cursor: locks[locks.length - 1].key } : { locks };
  }

  /**
   * {@inheritDoc LockProvider.holder}
   * @throws {LockStoreError} when PostgreSQL fails or does not answer within `commandTimeout`.
   */
  async holder(key: string): Promise<LockHolder | null> {
    const rows = await this.bounded('holder', key, () => this.query(this.sql.holder, [key]));
    return rows.length === 0 ? null : lockHolder(String(rows[0].owner), Number(rows[0].ms));
  }

  /**
   * Round trip of a read of the lock table, in ms (so a missing table fails it).
   * @throws {LockStoreError} when PostgreSQL does not answer within `commandTimeout`.
   */
  async ping(): Promise<number> {
    const started = performance.now();
    // Reads the lock table too: a table that is missing (createTable: false) fails the ping, not the first lock.
    await this.bounded('ping', undefined, () => this.query(`SELECT 1 FROM ${this.names.locks} LIMIT 0`));
    return performance.now() - started;
  }

  /**
   * Resolves queued waiters `null` (and removes their tickets), waits for
   * calls in flight, ends the LISTEN connection, and ends the pool if the
   * provider opened it (a `pg.Pool` you passed stays open). Calls after it
   * fail with {@link LockStoreError}.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const tickets: string[] = [];
    for (const [key, queue] of this.queues) {
      for (const waiter of queue.waiters.splice(0)) {
        tickets.push(waiter.ticket);
        waiter.settle(null);
      }
      this.disarm(queue);
      this.queues.delete(key);
    }
    this.stopHeartbeat();
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    await this.settled();
    if (tickets.length > 0 && this.pool) {
      await this.bounded('close', undefined, () => this.query(this.sql.dequeue, [tickets, this.names.raw])).catch(() => undefined);
    }
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    if (this.ownsPool) {
      this.poolEnded = true;
      await this.pool?.end().catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------- waiting

  /** Joins the local queue with the ticket just taken; `recheckMs`: when to look again unless woken first. */
  private wait(request: LockAcquireRequest, fences: number, ticket: string, recheckMs: number): Promise<LockGrant | null> {
    const { key, owner, ttl, signal, waitTimeout } = request;
    return new Promise<LockGrant | null>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => this.leave(waiter);
      const waiter: Waiter = {
        key,
        owner,
        ttl,
        fences,
        ticket,
        done: false,
        settle: (result) => {
          if (waiter.done) return;
          waiter.done = true;
          if (timer !== undefined) clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          if (result instanceof Error) reject(result);
          else resolve(result);
        },
      };
      // (not unref'd: like any timer, a pending wait keeps the process alive until it ends)
      if (waitTimeout !== undefined) timer = setTimeout(() => this.leave(waiter), waitTimeout);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.enqueue(waiter, recheckMs);
    });
  }

  /** Puts a waiter with its ticket into the local queue; a new head looks again after `recheckMs`. */
  private enqueue(waiter: Waiter, recheckMs: number): void {
    let queue = this.queues.get(waiter.key);
    if (!queue) {
      queue = { waiters: [], busy: false, again: false, failures: 0 };
      this.queues.set(waiter.key, queue);
    }
    const t = BigInt(waiter.ticket);
    const at = queue.waiters.findIndex((w) => BigInt(w.ticket) > t);
    queue.waiters.splice(at < 0 ? queue.waiters.length : at, 0, waiter);
    this.startHeartbeat();
    if (queue.waiters[0] !== waiter) return; // the head before it keeps its own schedule
    if (recheckMs <= 0) this.kick(waiter.key);
    else if (!queue.busy) this.arm(waiter.key, queue, recheckMs);
  }

  /**
   * A waiter gives up (timeout, abort): leaves both queues, wakes the next,
   * and resolves `null` once its ticket is gone from the table, so that its
   * caller's next call never finds it in the way. A head whose statement is
   * in flight is left to {@link retry}, which releases what that statement
   * may grant.
   */
  private leave(waiter: Waiter): void {
    if (waiter.done || waiter.leaving) return;
    waiter.leaving = true;
    const queue = this.queues.get(waiter.key);
    const i = queue ? queue.waiters.indexOf(waiter) : -1;
    if (queue && i === 0 && queue.busy) return;
    if (queue && i >= 0) {
      queue.waiters.splice(i, 1);
      if (queue.waiters.length === 0) this.forget(waiter.key, queue);
      else if (i === 0) this.kick(waiter.key);
    }
    void this.track(this.dropTicketsNow([waiter.ticket]).then(() => waiter.settle(null)));
  }

  /** {@link dropTickets}, done when the entries are gone (or, the database being away, kept for later). Never rejects. */
  private async dropTicketsNow(tickets: string[]): Promise<void> {
    if (this.closed) return;
    try {
      await this.bounded('acquire', undefined, () => this.query(this.sql.dequeue, [tickets, this.names.raw]));
    } catch {
      this.orphans.push(...tickets);
    }
  }

  /**
   * Removes queue entries of waiters that left. When the database is away,
   * they are kept and removed after the next call that succeeds, so that a
   * dead entry does not hold the queue back for its whole lease.
   */
  private dropTickets(tickets: string[]): void {
    if (this.closed || tickets.length === 0) return;
    void this.track(
      this.bounded('acquire', undefined, () => this.query(this.sql.dequeue, [tickets, this.names.raw])).catch(() => {
        this.orphans.push(...tickets);
      }),
    );
  }

  /** Lets the head of the local queue for `key` try again (once at a time). */
  private kick(key: string): void {
    const queue = this.queues.get(key);
    if (!queue || this.closed) return;
    if (queue.busy) {
      queue.again = true;
      return;
    }
    void this.track(this.retry(key, queue));
  }

  private kickAll(): void {
    for (const key of this.queues.keys()) this.kick(key);
  }

  private async retry(key: string, queue: Queue): Promise<void> {
    const head = queue.waiters[0];
    if (!head) return;
    queue.busy = true;
    queue.again = false;
    this.disarm(queue);
    let next: number | undefined;
    const sent = performance.now(); // the lease starts on the server after this
    try {
      const r = await this.bounded('acquire', key, () => this.attempt(key, head.owner, head.ttl, head.fences, head.ticket));
      const leaseStartedAt = r.token === null ? (queue.failedAt ?? sent) : sent;
      queue.failures = 0;
      queue.failedAt = undefined;
      const token = r.token ?? r.mine;
      if (token !== null) {
        const i = queue.waiters.indexOf(head);
        if (i >= 0) queue.waiters.splice(i, 1);
        if (head.done || head.leaving) {
          // It gave up while its turn came: hand the lock on, then its call answers.
          void this.track(this.release(key, head.owner).then(() => head.settle(null), () => head.settle(null)));
        } else {
          head.settle({ fencingToken: token, fences: head.fences, queued: true, leaseStartedAt });
        }
        // The next one looks again when the new holder's lease would end (if it never releases).
        next = head.ttl;
      } else {
        next = r.heldMs ?? r.aheadMs ?? 50;
      }
    } catch (err) {
      if (queue.failures++ === 0) {
        // One retry: a connection the database dropped is often replaced at once.
        queue.failedAt = sent;
        next = 250;
      } else {
        queue.failures = 0;
        queue.failedAt = undefined;
        const failed = queue.waiters.splice(0);
        for (const waiter of failed) waiter.settle(err as Error);
        this.dropTickets(failed.map((w) => w.ticket));
      }
    } finally {
      queue.busy = false;
    }
    if (head.leaving && queue.waiters[0] === head) {
      // It gave up while its statement was in flight, which did not grant it the key.
      queue.waiters.shift();
      void this.track(this.dropTicketsNow([head.ticket]).then(() => head.settle(null)));
      queue.again = true;
    }
    if (queue.waiters.length === 0) {
      this.forget(key, queue);
      return;
    }
    if (queue.again) {
      this.kick(key);
      return;
    }
    if (next !== undefined) this.arm(key, queue, next);
  }

  /** The head of `key`'s local queue looks again in `ms` (plus a little, so that the lease has surely ended). */
  private arm(key: string, queue: Queue, ms: number): void {
    this.disarm(queue);
    const delay = Math.max(0, ms) + 15;
    queue.wakeAt = performance.now() + delay;
    queue.wake = setTimeout(() => this.kick(key), delay);
    queue.wake.unref?.();
  }

  private forget(key: string, queue: Queue): void {
    this.disarm(queue);
    if (this.queues.get(key) === queue && queue.waiters.length === 0 && !queue.busy) this.queues.delete(key);
    if (this.queues.size === 0) this.stopHeartbeat();
  }

  private disarm(queue: Queue): void {
    if (queue.wake !== undefined) clearTimeout(queue.wake);
    queue.wake = undefined;
    queue.wakeAt = undefined;
  }

  /** While waiters exist: renew their queue entries, and check that the listen connection is alive. */
  private startHeartbeat(): void {
    if (this.heartbeat !== undefined) return;
    this.heartbeat = setInterval(() => {
      const tickets = [...this.queues.values()].flatMap((q) => q.waiters.map((w) => w.ticket));
      if (tickets.length > 0) {
        void this.track(this.bounded('heartbeat', undefined, () => this.query(this.sql.heartbeat, [tickets, this.waiterLease])).catch(() => undefined));
      }
      const listener = this.listener;
      if (listener) {
        void this.track(
          this.bounded('listen', undefined, () => listener.query({ text: 'SELECT 1', query_timeout: this.commandTimeout } as never)).catch(() =>
            this.listenerLost(listener),
          ),
        );
      }
    }, this.waiterLease / 3);
    this.heartbeat.unref?.();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  // ---------------------------------------------------------------- LISTEN connection

  /** The listen connection, connected and listening; connects it if needed. */
  private listen(): Promise<Client> {
    if (this.listener) return Promise.resolve(this.listener);
    if (!this.listening) {
      this.listening = this.connectListener().finally(() => {
        this.listening = undefined;
      });
    }
    return this.listening;
  }

  private async connectListener(): Promise<Client> {
    const pg = loadOptionalPeer<PgModule>('pg', 'PostgresLockProvider');
    const base: ClientConfig = this.ownsPool ? this.poolConfig() : this.appPoolConfig();
    const client = new pg.Client({ ...base, keepAlive: true, connectionTimeoutMillis: this.commandTimeout });
    client.on('error', () => this.listenerLost(client));
    client.on('end', () => this.listenerLost(client));
    client.on('notification', (msg) => {
      if (msg.channel === this.names.raw && msg.payload !== undefined) this.notified(msg.payload);
    });
    try {
      await client.connect();
      await client.query({ text: `LISTEN "${this.names.raw}"`, query_timeout: this.commandTimeout } as never);
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('the provider is closed');
    }
    this.listener = client;
    this.reconnectDelay = 100;
    return client;
  }

  /** The listen connection failed or ended: waiters re-check now (a NOTIFY may be lost), and it reconnects. */
  private listenerLost(client: Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.kickAll();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer !== undefined || this.queues.size === 0) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closed || this.listener || this.queues.size === 0) return;
      void this.track(
        this.listen().then(
          () => this.kickAll(), // notifications sent while disconnected are lost: look again
          () => {
            this.reconnectDelay = Math.min(this.reconnectDelay * 2, 2_000);
            this.scheduleReconnect();
          },
        ),
      );
    }, this.reconnectDelay);
    this.reconnectTimer.unref?.();
  }

  // ---------------------------------------------------------------- database access

  /** One acquire statement: with `ticket` for a queued waiter; with `enqueue`, a first attempt that takes a ticket if not granted. */
  private async attempt(key: string, owner: string, ttl: number, fences: number, ticket: string | null, enqueue = false): Promise<Attempt> {
    const rows = await this.query(this.sql.acquire, [key, owner, ttl, ticket, enqueue ? this.waiterLease : null, fences]);
    const row = rows[0] ?? {};
    const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
    return {
      token: num(row.token),
      ticket: (row.ticket as string | null) ?? null,
      mine: ticket === null ? null : num(row.mine),
      heldMs: num(row.held_ms),
      aheadMs: num(row.ahead_ms),
    };
  }

  private async query(text: string, values?: unknown[]): Promise<QueryResultRow[]> {
    const pool = await this.ready();
    const result = await pool.query({ name: this.statementNames.get(text), text, values, query_timeout: this.commandTimeout } as never);
    if (this.orphans.length > 0) this.dropTickets(this.orphans.splice(0));
    return (result as { rows: QueryResultRow[] }).rows;
  }

  /**
   * Runs `fn` within `commandTimeout`, and turns every failure into a
   * {@link LockStoreError}: a dead database is never reported as a held lock.
   */
  private async bounded<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    const where = key === undefined ? '' : ` (key "${key}")`;
    if (this.closed && operation !== 'close' && operation !== 'release') {
      throw new LockStoreError(operation, `${providerClosedDetail('PostgreSQL')}${where}`);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const target = postgresTarget(this.connection);
        const last = this.lastError;
        const cause = last === undefined ? undefined : postgresCause(target.at, target.database, last);
        reject(new LockStoreError(operation, `${noAnswerDetail(`PostgreSQL at ${target.at}`, this.commandTimeout, cause)}${where}`, { cause: last }));
      }, this.commandTimeout);
    });
    try {
      const result = await Promise.race([fn(), timeout]);
      this.lastError = undefined;
      return result;
    } catch (err) {
      if (err instanceof LockStoreError || err instanceof LockOptionsError) throw err;
      this.lastError = err;
      const target = postgresTarget(this.connection);
      const code = (err as { code?: unknown })?.code;
      const hint =
        code === '42P01'
          ? lockTableMissingHint(this.tableName)
          : code === '42501' && (err as { duringSchema?: boolean }).duringSchema === true
            ? lockTableNotCreatableHint(this.tableName)
            : '';
      throw new LockStoreError(operation, `${postgresCause(target.at, target.database, err)}${hint}${where}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The pool, with the tables created (once, on first use). */
  private async ready(): Promise<Pool> {
    // After close(), never open a new pool, nor use the one it ended.
    if (this.closed && (!this.pool || this.poolEnded)) throw new Error('the provider is closed');
    if (!this.pool) {
      if (isPool(this.connection)) {
        this.pool = this.connection;
      } else {
        const pg = loadOptionalPeer<PgModule>('pg', 'PostgresLockProvider');
        if (!this.pool) {
          const pool = new pg.Pool(this.poolConfig());
          // An idle connection the server dropped must not crash the app; the pool replaces it.
          pool.on('error', () => undefined);
          this.pool = pool;
        }
      }
    }
    const pool = this.pool;
    if (this.createTable) {
      this.schema ??= this.ensureSchema(pool).catch((err: unknown) => {
        this.schema = undefined; // try again on the next call
        throw err;
      });
      await this.schema;
    }
    return pool;
  }

  private async ensureSchema(pool: Pool): Promise<void> {
    // One simple-protocol query is one transaction: the transaction-level advisory lock
    // serializes concurrent CREATE ... IF NOT EXISTS from several instances (which can
    // otherwise fail on the catalog's unique index), and ends with it.
    const literal = `'nest-lock schema ${this.names.raw}'`;
    try {
      await pool.query({ text: `SELECT pg_advisory_xact_lock(hashtext(${literal}));\n${schemaSqlFor(this.names)}`, query_timeout: this.commandTimeout } as never);
    } catch (err) {
      // (marks a permission error as the table creation's, for the message)
      if (err !== null && typeof err === 'object') (err as { duringSchema?: boolean }).duringSchema = true;
      throw err;
    }
  }

  /** The app pool's connection settings, for the listen connection (pg-pool keeps the password non-enumerable). */
  private appPoolConfig(): ClientConfig {
    const options = (this.connection as Pool & { options?: ClientConfig }).options ?? {};
    return { ...options, password: options.password };
  }

  private poolConfig(): PoolConfig {
    const given: PoolConfig = typeof this.connection === 'string' ? { connectionString: this.connection } : { ...(this.connection as PoolConfig) };
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

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise)).catch(() => undefined);
    return promise;
  }

  /** Waits for in-flight background work (bounded by `commandTimeout` each). */
  private async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
