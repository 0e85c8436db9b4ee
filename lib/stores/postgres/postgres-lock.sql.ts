import { LockOptionsError } from '../../errors/lock.errors.js';
import { optionMessage, tableNameMessage } from '../../errors/lock.messages.js';

/** Default lock table of {@link PostgresLockProvider}. */
export const DEFAULT_POSTGRES_LOCK_TABLE = 'nest_locks';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WAITERS_SUFFIX = '_waiters';
const INDEX_SUFFIX = '_waiters_name_idx';
/** `$n` ms as an interval. */
const MS = `* interval '1 millisecond'`;

/**
 * The identifiers of one lock table, quoted for SQL.
 * @internal
 */
export interface PostgresLockTables {
  /** As given: also the NOTIFY channel. */
  readonly raw: string;
  /** The lock table. */
  readonly locks: string;
  /** The FIFO queue of waiters, `<table>_waiters`. */
  readonly waiters: string;
  /** The waiters' index, `<table>_waiters_name_idx` (in the table's schema). */
  readonly index: string;
}

/**
 * Checks a `tableName` option (`table` or `schema.table`: letters, digits, `_`;
 * at most 63 characters) and quotes its parts.
 * @throws {LockOptionsError} for a name that is not such an identifier.
 * @internal
 */
export function postgresLockTables(tableName: unknown): PostgresLockTables {
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

/**
 * The DDL of the lock table and the waiters' queue (idempotent: `IF NOT EXISTS`;
 * adds `acquired_at` to a lock table created before it existed).
 * @internal
 */
export function schemaSql(n: PostgresLockTables): string {
  return `CREATE TABLE IF NOT EXISTS ${n.locks} (
  name          text        PRIMARY KEY,
  owner         text,
  fencing_token bigint      NOT NULL,
  expires_at    timestamptz NOT NULL,
  acquired_at   timestamptz
);
ALTER TABLE ${n.locks} ADD COLUMN IF NOT EXISTS acquired_at timestamptz;
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
export const POSTGRES_LOCK_SCHEMA_SQL: string = schemaSql(postgresLockTables(DEFAULT_POSTGRES_LOCK_TABLE));

/**
 * {@link schemaSql} behind a transaction-level advisory lock, as one simple-protocol
 * query (one transaction): instances that start together do not race on the catalog.
 * @internal
 */
export const createSchemaSql = (n: PostgresLockTables): string => `SELECT pg_advisory_xact_lock(hashtext('nest-lock schema ${n.raw}'));\n${schemaSql(n)}`;

/**
 * Acquire, in one statement: insert the row, or take over a row that is
 * released (owner NULL) or whose lease ended, unless a live waiter with an
 * earlier ticket is queued for the name (FIFO across processes). A granted
 * waiter leaves the queue in the same statement. When not granted, the answer
 * says when to look again: the holder's remaining lease (`held_ms`), else the
 * lease of the earliest waiter ahead (`ahead_ms`; it may have died). `mine` is
 * the token when this owner already holds the row: a retry after an error
 * whose first attempt had committed.
 *
 * The grant's time goes to `acquired_at` (what inspection calls "held since").
 * Parameters: $1 name, $2 owner, $3 ttl ms, $4 the waiter's ticket (or NULL),
 * $5 the lease of a new queue entry (NULL: take no ticket), $6 fencing tokens
 * to reserve. A first attempt that will wait takes its ticket in the same
 * statement when not granted; a new ticket is greater than every one the
 * statement sees, so it queues behind all of them. Every time is the
 * database's clock. A grant draws a block of $6 tokens and answers the first.
 * A new row's counter starts from the database clock in microseconds, so a row
 * pruned long ago comes back with greater tokens (a counter gains at most 16
 * per grant, far less than one per microsecond).
 * @internal
 */
export const acquireSql = (n: PostgresLockTables): string => `WITH ahead AS (
  SELECT count(*) AS n, min(w.expires_at) AS soonest FROM ${n.waiters} w
  WHERE w.name = $1 AND w.expires_at > clock_timestamp() AND ($4::bigint IS NULL OR w.ticket < $4::bigint)
), granted AS (
  INSERT INTO ${n.locks} AS l (name, owner, fencing_token, expires_at, acquired_at)
  SELECT $1, $2, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + $6::bigint - 1, clock_timestamp() + $3::float8 ${MS}, clock_timestamp()
  FROM ahead WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
    SET owner = EXCLUDED.owner, fencing_token = l.fencing_token + $6::bigint, expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at
    WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp()
  RETURNING l.fencing_token
), dequeued AS (
  DELETE FROM ${n.waiters} w WHERE $4::bigint IS NOT NULL AND w.ticket = $4::bigint AND EXISTS (SELECT 1 FROM granted)
), enqueued AS (
  INSERT INTO ${n.waiters} (name, owner, expires_at)
  SELECT $1, $2, clock_timestamp() + $5::float8 ${MS} WHERE $5::float8 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM granted)
  RETURNING ticket
), pruned AS (
  DELETE FROM ${n.waiters} w WHERE $5::float8 IS NOT NULL AND w.name = $1 AND w.expires_at < clock_timestamp() - interval '1 minute'
)
SELECT (SELECT fencing_token - $6::bigint + 1 FROM granted)::float8 AS token, (SELECT ticket::text FROM enqueued) AS ticket,
  (SELECT CASE WHEN l.owner = $2 AND l.expires_at > clock_timestamp() THEN l.fencing_token - $6::bigint + 1 END FROM ${n.locks} l WHERE l.name = $1)::float8 AS mine,
  (SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
     THEN extract(epoch FROM l.expires_at - clock_timestamp()) * 1000 END FROM ${n.locks} l WHERE l.name = $1)::float8 AS held_ms,
  (SELECT extract(epoch FROM ahead.soonest - clock_timestamp()) * 1000 FROM ahead)::float8 AS ahead_ms`;

/**
 * Extend ($1 name, $2 owner, $3 ttl ms, $4 channel): a row when extended. When
 * it shortens the lease (`holdAtLeast` on release), waiters are notified, so
 * that they look again at the new end instead of the old one.
 * @internal
 */
export const extendSql = (n: PostgresLockTables): string => `WITH old AS (
  SELECT expires_at FROM ${n.locks} WHERE name = $1 AND owner = $2 AND expires_at > clock_timestamp() FOR UPDATE
), u AS (
  UPDATE ${n.locks} l SET expires_at = clock_timestamp() + $3::float8 ${MS} FROM old
  WHERE l.name = $1 AND l.owner = $2 RETURNING l.expires_at < old.expires_at AS shorter
)
SELECT CASE WHEN u.shorter THEN pg_notify($4, ':' || $1) END IS NULL AS ok FROM u`;

/**
 * Release ($1 name, $2 owner, $3 channel) keeps the row with owner NULL: it
 * carries the name's fencing counter (see {@link pruneSql}). NOTIFY goes out
 * in the same statement, so waiters in every process wake when it commits.
 * Payloads are `<ticket>,<ms>:<name>`: the first live ticket in line and the
 * ms left of its queue entry's lease (also answered as `next`); an empty
 * `<ticket>,<ms>` wakes every process. `live`: the lease had not ended.
 * @internal
 */
export const releaseSql = (n: PostgresLockTables): string => `WITH r AS (
  UPDATE ${n.locks} SET owner = NULL WHERE name = $1 AND owner = $2 RETURNING name, expires_at > clock_timestamp() AS live
), nxt AS (
  SELECT w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint AS next
  FROM ${n.waiters} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() ORDER BY w.ticket LIMIT 1
)
SELECT r.live, nxt.next, pg_notify($3, coalesce(nxt.next, '') || ':' || r.name) IS NULL AS notified FROM r LEFT JOIN nxt ON true`;

/**
 * Removes queue entries ($1 tickets, $2 channel) of waiters that left, and
 * notifies the next in line of each name (it may be in another process).
 * @internal
 */
export const dequeueSql = (n: PostgresLockTables): string => `WITH d AS (DELETE FROM ${n.waiters} WHERE ticket = ANY($1::bigint[]) RETURNING name)
SELECT pg_notify($2, coalesce((
  SELECT w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint FROM ${n.waiters} w
  WHERE w.name = x.name AND w.expires_at > clock_timestamp() AND w.ticket <> ALL($1::bigint[]) ORDER BY w.ticket LIMIT 1
), '') || ':' || x.name) IS NULL
FROM (SELECT DISTINCT name FROM d) x`;

/**
 * One page of the held locks under a prefix ($1), after the cursor ($2), at
 * most $3 rows, in name order (the primary key), with their live waiters.
 * @internal
 */
export const inspectSql = (n: PostgresLockTables): string => `SELECT l.name, l.owner, l.fencing_token::float8 AS token,
  (extract(epoch FROM l.expires_at - clock_timestamp()) * 1000)::float8 AS remaining_ms,
  (extract(epoch FROM l.acquired_at) * 1000)::float8 AS acquired_ms,
  (SELECT count(*) FROM ${n.waiters} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())::int AS waiters
FROM ${n.locks} l
WHERE l.name >= $1 AND starts_with(l.name, $1) AND ($2::text IS NULL OR l.name > $2::text)
  AND l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
ORDER BY l.name LIMIT $3::int`;

/**
 * Deletes a batch ($2) of rows whose lease ended more than $1 ms ago (nobody
 * holds them, and no live waiter is queued, or it would have taken them), and
 * stale queue entries of any name; answers `n`, the rows deleted. Only rows
 * whose counter is behind the clock (in microseconds) by as much: the row that
 * replaces one then starts above every token it gave, even if the clock is set
 * back by less than $1 ms.
 * @internal
 */
export const pruneSql = (n: PostgresLockTables): string => `WITH gone AS (
  DELETE FROM ${n.locks} WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM ${n.locks} WHERE expires_at < clock_timestamp() - $1::float8 ${MS}
      AND fencing_token < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - ($1::float8 * 1000)::bigint
    LIMIT $2::int))
  RETURNING 1
), stale AS (
  DELETE FROM ${n.waiters} WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM ${n.waiters} WHERE expires_at < clock_timestamp() - interval '1 minute' LIMIT $2::int))
)
SELECT count(*)::int AS n FROM gone`;

/**
 * Who holds lock $1 now (a live lease): `owner` and `ms` left.
 * @internal
 */
export const holderSql = (n: PostgresLockTables): string => `SELECT owner, extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS ms FROM ${n.locks}
WHERE name = $1 AND owner IS NOT NULL AND expires_at > clock_timestamp()`;

/**
 * Renews the queue entries $1 (tickets) for $2 ms: a waiting process is alive.
 * @internal
 */
export const heartbeatSql = (n: PostgresLockTables): string =>
  `UPDATE ${n.waiters} SET expires_at = clock_timestamp() + $2::float8 ${MS} WHERE ticket = ANY($1::bigint[])`;

/**
 * The lock statements of one table, by operation (the names of their prepared statements).
 * @internal
 */
export function postgresLockStatements(n: PostgresLockTables) {
  return {
    acquire: acquireSql(n),
    extend: extendSql(n),
    release: releaseSql(n),
    dequeue: dequeueSql(n),
    inspect: inspectSql(n),
    prune: pruneSql(n),
    holder: holderSql(n),
    heartbeat: heartbeatSql(n),
    extendMany: extendManySql(n),
  };
}

/** @internal */
export type PostgresLockStatements = ReturnType<typeof postgresLockStatements>;

/**
 * A read of the lock table that returns nothing: a missing table fails it.
 * @internal
 */
export const pingSql = (n: PostgresLockTables): string => `SELECT 1 FROM ${n.locks} LIMIT 0`;

/**
 * Subscribes a connection to the table's NOTIFY channel.
 * @internal
 */
export const listenSql = (n: PostgresLockTables): string => `LISTEN "${n.raw}"`;

/**
 * A round trip that proves a connection alive.
 * @internal
 */
export const ALIVE_SQL = 'SELECT 1';

/**
 * Extend of many locks in one statement ($1 names, $2 owners, $3 ttls in ms,
 * $4 channel): a row `i` (the 1-based place in the arrays) per lock extended,
 * as {@link extendSql} per lock (owner-checked, a live lease; a shorter lease
 * notifies waiters). Rows are locked in name order: two batches never deadlock.
 * @internal
 */
export const extendManySql = (n: PostgresLockTables): string => `WITH old AS (
  SELECT l.name, l.owner, l.expires_at, r.ttl, r.i FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS r(name, owner, ttl, i)
  JOIN ${n.locks} l ON l.name = r.name AND l.owner = r.owner
  WHERE l.expires_at > clock_timestamp() ORDER BY l.name FOR UPDATE OF l
), u AS (
  UPDATE ${n.locks} l SET expires_at = clock_timestamp() + old.ttl ${MS} FROM old
  WHERE l.name = old.name AND l.owner = old.owner RETURNING old.i, l.name, l.expires_at < old.expires_at AS shorter
)
SELECT u.i::int AS i, CASE WHEN u.shorter THEN pg_notify($4, ':' || u.name) END IS NULL AS ok FROM u`;
