/**
 * Every lock statement of the PostgreSQL store (the tables and their DDL are in
 * `postgres-lock-schema.sql.ts`).
 */
import type { PostgresLockTables } from './postgres-lock-schema.sql.js';
import { ENTRY_OF, LIVE, MS, NEXT, NOW_MS, NOW_US, PLAIN_HELD } from './postgres-lock-fragments.sql.js';
import { releasePermitSql, releaseSql } from './postgres-lock-release.sql.js';
import { pruneSql } from './postgres-lock-prune.sql.js';

/** The live waiters ahead (all, or those before ticket $4), and the greatest other limit than `limit` an exclusive one asked. */
const ahead = (n: PostgresLockTables, limit: string): string => `ahead AS (
  SELECT count(*) AS n, min(w.expires_at) AS soonest, max(w.permits) FILTER (WHERE w.mode = 'exclusive' AND w.permits <> ${limit}) AS other
  FROM ${n.waiters} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() AND ($4::bigint IS NULL OR w.ticket < $4::bigint)
)`;

/**
 * The CTEs after a grant. `clash`, for a first exclusive attempt not granted:
 * the other limit than `limit` the key is held or awaited with. A granted
 * waiter leaves the queue; a first attempt not granted takes a ticket (unless
 * it clashes), with `direct`: the lease (ms) and fencing tokens a release
 * grants it directly (NULL: it asks itself); stale entries go.
 */
const afterGrant = (n: PostgresLockTables, mode: string, limit: string, direct = 'NULL::float8, NULL::int'): string => `clash AS (
  SELECT coalesce(ahead.other, nullif((SELECT CASE WHEN ${PLAIN_HELD} THEN 1 WHEN EXISTS (SELECT 1 FROM ${LIVE} AND h->>'m' = 'exclusive') THEN l.permits END
    FROM ${n.locks} l WHERE l.name = $1), ${limit})) AS recorded
  FROM ahead WHERE $4::bigint IS NULL AND ${mode} = 'exclusive' AND NOT EXISTS (SELECT 1 FROM granted)
), dequeued AS (
  DELETE FROM ${n.waiters} w WHERE $4::bigint IS NOT NULL AND w.ticket = $4::bigint AND EXISTS (SELECT 1 FROM granted)
), enqueued AS (
  INSERT INTO ${n.waiters} (name, owner, expires_at, mode, permits, grant_ms, fences)
  SELECT $1, $2, clock_timestamp() + $5::float8 ${MS}, ${mode}, ${limit}, ${direct}
  WHERE $5::float8 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM granted) AND NOT EXISTS (SELECT 1 FROM clash WHERE recorded IS NOT NULL)
  RETURNING ticket
), pruned AS (
  DELETE FROM ${n.waiters} w WHERE $5::float8 IS NOT NULL AND w.name = $1 AND w.expires_at < clock_timestamp() - interval '1 minute'
)`;

/** The answer of both acquire statements; `token` from `granted`, `mine` from lock row `l`; `now_ms`: the database clock (epoch ms). */
const answer = (n: PostgresLockTables, token: string, mine: string): string => `SELECT (SELECT ${token} FROM granted)::float8 AS token,
  (SELECT ticket::text FROM enqueued) AS ticket, (SELECT ${mine} FROM ${n.locks} l WHERE l.name = $1)::float8 AS mine,
  (SELECT CASE WHEN ${PLAIN_HELD} THEN extract(epoch FROM l.expires_at - clock_timestamp()) * 1000
     ELSE (SELECT min((h->>'e')::float8) FROM ${LIVE}) - ${NOW_MS} END FROM ${n.locks} l WHERE l.name = $1)::float8 AS held_ms,
  (SELECT extract(epoch FROM ahead.soonest - clock_timestamp()) * 1000 FROM ahead)::float8 AS ahead_ms, (SELECT recorded FROM clash) AS conflict,
  ${NOW_MS} AS now_ms`;

/**
 * Acquire a plain lock (exclusive, limit 1), in one statement: insert the row,
 * or take over a row that no one holds (owner NULL or lease ended, no live
 * entry in `holders`), unless a live waiter with an earlier ticket is queued
 * for the name (FIFO across processes). A granted waiter leaves the queue in
 * the same statement. When not granted, the answer says when to look again:
 * the holders' soonest lease end (`held_ms`), else the lease of the earliest
 * waiter ahead (`ahead_ms`; it may have died). `mine` is the token when this
 * owner already holds the row: a retry after an error whose first attempt had
 * committed. `conflict`: the other limit the key is held or awaited with (a
 * first attempt then neither waits nor is granted).
 *
 * The grant's time goes to `acquired_at` (what inspection calls "held since").
 * Parameters: $1 name, $2 owner, $3 ttl ms, $4 the waiter's ticket (or NULL),
 * $5 the lease of a new queue entry (NULL: take no ticket), $6 fencing tokens
 * to reserve, $7 the lease a release that grants the new queue entry directly
 * gives it (NULL: its waiter asks again when notified). A first attempt that will wait takes its ticket in the same
 * statement when not granted; a new ticket is greater than every one the
 * statement sees, so it queues behind all of them. Every time is the
 * database's clock. A grant draws a block of $6 tokens and answers the first.
 * A new row's counter starts from the database clock in microseconds, so a row
 * pruned long ago comes back with greater tokens (a counter gains at most 16
 * per grant, far less than one per microsecond).
 * @internal
 */
export const acquireSql = (n: PostgresLockTables): string => `WITH ${ahead(n, '1')}, granted AS (
  INSERT INTO ${n.locks} AS l (name, owner, fencing_token, expires_at, acquired_at)
  SELECT $1, $2, ${NOW_US} + $6::bigint - 1, clock_timestamp() + $3::float8 ${MS}, clock_timestamp()
  FROM ahead WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
    SET owner = EXCLUDED.owner, fencing_token = l.fencing_token + $6::bigint, expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at,
      holders = NULL, permits = NULL
    WHERE (l.owner IS NULL OR l.expires_at <= clock_timestamp()) AND (l.holders IS NULL OR NOT EXISTS (SELECT 1 FROM ${LIVE}))
  RETURNING l.fencing_token
), ${afterGrant(n, `'exclusive'`, '1', '$7::float8, $6::int')}
${answer(n, 'fencing_token - $6::bigint + 1', `CASE WHEN l.owner = $2 AND l.expires_at > clock_timestamp() THEN l.fencing_token - $6::bigint + 1 END`)},
  (SELECT extract(epoch FROM l.expires_at - clock_timestamp()) * 1000 FROM ${n.locks} l WHERE l.name = $1 AND l.owner = $2)::float8 AS mine_ms`;

/**
 * Acquire as one of several holders: shared ($6 `'shared'`) or one of $7
 * exclusive permits (a semaphore), as {@link acquireSql} does (same answer,
 * same $1–$5; one fencing token). Granted when the row has no plain holder
 * and its live entries admit the request (shared: none exclusive; exclusive:
 * none shared, fewer than $7, recorded with limit $7), and no live waiter is
 * ahead. Dead entries are dropped on the way. A waiter granted with its ticket
 * notifies the next live waiter on channel $8: it may enter too.
 * @internal
 */
export const acquirePermitSql = (n: PostgresLockTables): string => `WITH ${ahead(n, '$7::int')}, granted AS (
  INSERT INTO ${n.locks} AS l (name, fencing_token, expires_at, holders, permits)
  SELECT $1, z.t, clock_timestamp() + $3::float8 ${MS}, jsonb_build_array(${entry('z.t')}), CASE WHEN $6::text = 'exclusive' THEN $7::int END
  FROM ahead, (SELECT ${NOW_US} AS t) z WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
    SET owner = NULL, fencing_token = l.fencing_token + 1, expires_at = greatest(l.expires_at, EXCLUDED.expires_at), permits = EXCLUDED.permits,
      holders = coalesce((SELECT jsonb_agg(h) FROM ${LIVE}), '[]'::jsonb) || jsonb_build_array(${entry('l.fencing_token + 1')})
    WHERE (l.owner IS NULL OR l.expires_at <= clock_timestamp()) AND (SELECT CASE WHEN $6::text = 'shared' THEN bool_and(h->>'m' = 'shared') IS NOT FALSE
      ELSE bool_and(h->>'m' = 'exclusive') IS NOT FALSE AND count(*) < $7::int AND (count(*) = 0 OR l.permits = $7::int) END FROM ${LIVE})
  RETURNING l.fencing_token
), ${afterGrant(n, '$6::text', '$7::int')}, chained AS (
  SELECT pg_notify($8, ${NEXT} || ':' || $1) FROM ${n.waiters} w
  WHERE $4::bigint IS NOT NULL AND EXISTS (SELECT 1 FROM granted) AND w.name = $1 AND w.ticket > $4::bigint AND w.expires_at > clock_timestamp()
  ORDER BY w.ticket LIMIT 1
)
${answer(n, 'fencing_token', `(SELECT (h->>'t')::float8 FROM ${LIVE} AND h->>'o' = $2 LIMIT 1)`)}, (SELECT count(*) FROM chained)::int AS chained`;

/** A new entry of `holders` for owner $2, lease $3 ms, mode $6, with fencing token `token`. */
function entry(token: string): string {
  return `jsonb_build_object('o', $2::text, 't', ${token}, 'e', ${NOW_MS} + $3::float8, 's', ${NOW_MS}, 'm', $6::text)`;
}

/**
 * Extend ($1 name, $2 owner, $3 ttl ms, $4 channel) a plain lock: a row when
 * extended. When it shortens the lease (`holdAtLeast` on release), waiters
 * are notified, so that they look again at the new end instead of the old one.
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
 * {@link extendSql} for the owner's entry in `holders` (a shared hold or a
 * permit); the row's `expires_at` stays at or after every entry's end.
 * @internal
 */
export const extendPermitSql = (n: PostgresLockTables): string => `WITH old AS (
  SELECT (SELECT (h->>'e')::float8 FROM ${LIVE} AND h->>'o' = $2 LIMIT 1) AS ends FROM ${n.locks} l WHERE ${ENTRY_OF} FOR UPDATE
), u AS (
  UPDATE ${n.locks} l SET expires_at = greatest(l.expires_at, clock_timestamp() + $3::float8 ${MS}),
    holders = (SELECT jsonb_agg(CASE WHEN h->>'o' = $2 THEN jsonb_set(h, '{e}', to_jsonb(${NOW_MS} + $3::float8)) ELSE h END) FROM jsonb_array_elements(l.holders) h)
  FROM old WHERE ${ENTRY_OF} AND old.ends > ${NOW_MS} RETURNING ${NOW_MS} + $3::float8 < old.ends AS shorter
)
SELECT CASE WHEN u.shorter THEN pg_notify($4, ':' || $1) END IS NULL AS ok FROM u`;

/**
 * Removes queue entries ($1 tickets, $2 channel) of waiters that left, and
 * notifies the next in line of each name (it may be in another process).
 * Answers `gone`, the tickets it removed: one it did not find was granted by
 * a release meanwhile (or had lapsed long ago), and its waiter releases.
 * @internal
 */
export const dequeueSql = (n: PostgresLockTables): string => `WITH d AS (DELETE FROM ${n.waiters} WHERE ticket = ANY($1::bigint[]) RETURNING name, ticket),
x AS (SELECT pg_notify($2, coalesce((
  SELECT ${NEXT} FROM ${n.waiters} w
  WHERE w.name = x.name AND w.expires_at > clock_timestamp() AND w.ticket <> ALL($1::bigint[]) ORDER BY w.ticket LIMIT 1
), '') || ':' || x.name) IS NULL AS notified
FROM (SELECT DISTINCT name FROM d) x)
SELECT (SELECT array_agg(ticket::text) FROM d) AS gone, (SELECT count(*) FROM x)::int AS names`;

/**
 * One page of the held locks under a prefix ($1), after the cursor ($2), at
 * most $3 names, in name order (the primary key): one row per live holder,
 * with its mode and the key's permits, and the name's live waiters.
 * @internal
 */
export const inspectSql = (n: PostgresLockTables): string => `WITH page AS (
  SELECT l.* FROM ${n.locks} l
  WHERE l.name >= $1 AND starts_with(l.name, $1) AND ($2::text IS NULL OR l.name > $2::text) AND (${PLAIN_HELD} OR EXISTS (SELECT 1 FROM ${LIVE}))
  ORDER BY l.name LIMIT $3::int
)
SELECT l.name, x.owner, x.token, x.remaining_ms, x.acquired_ms, x.mode, x.permits,
  (SELECT count(*) FROM ${n.waiters} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())::int AS waiters
FROM page l CROSS JOIN LATERAL (
  SELECT l.owner, l.fencing_token::float8 AS token, (extract(epoch FROM l.expires_at - clock_timestamp()) * 1000)::float8 AS remaining_ms,
    (extract(epoch FROM l.acquired_at) * 1000)::float8 AS acquired_ms, 'exclusive' AS mode, 1 AS permits WHERE ${PLAIN_HELD}
  UNION ALL
  SELECT h->>'o', (h->>'t')::float8, (h->>'e')::float8 - ${NOW_MS}, (h->>'s')::float8, h->>'m', CASE WHEN h->>'m' = 'shared' THEN 1 ELSE l.permits END
  FROM ${LIVE}
) x
ORDER BY l.name, x.token`;

/**
 * Who holds lock $1 now (a live lease): `owner` and `ms` left; of several holders, the one whose lease ends last.
 * @internal
 */
export const holderSql = (n: PostgresLockTables): string => `SELECT x.owner, x.ms FROM ${n.locks} l CROSS JOIN LATERAL (
  SELECT l.owner, extract(epoch FROM l.expires_at - clock_timestamp()) * 1000 AS ms WHERE ${PLAIN_HELD}
  UNION ALL SELECT h->>'o', (h->>'e')::float8 - ${NOW_MS} FROM ${LIVE}
) x WHERE l.name = $1 ORDER BY x.ms DESC LIMIT 1`;

/**
 * Renews the queue entries $1 (tickets) for $2 ms: a waiting process is
 * alive. Answers `now_ms`, the database clock (epoch ms).
 * @internal
 */
export const heartbeatSql = (n: PostgresLockTables): string =>
  `WITH u AS (UPDATE ${n.waiters} SET expires_at = clock_timestamp() + $2::float8 ${MS} WHERE ticket = ANY($1::bigint[])) SELECT ${NOW_MS} AS now_ms`;

/**
 * The lock statements of one table, by operation (the names of their prepared statements).
 * @internal
 */
export function postgresLockStatements(n: PostgresLockTables) {
  return {
    acquire: acquireSql(n),
    acquirePermit: acquirePermitSql(n),
    extend: extendSql(n),
    extendPermit: extendPermitSql(n),
    release: releaseSql(n),
    releasePermit: releasePermitSql(n),
    dequeue: dequeueSql(n),
    inspect: inspectSql(n),
    prune: pruneSql(n),
    holder: holderSql(n),
    heartbeat: heartbeatSql(n),
    extendMany: extendManySql(n),
    extendPermitMany: extendPermitManySql(n),
  };
}

/** @internal */
export type PostgresLockStatements = ReturnType<typeof postgresLockStatements>;

/**
 * Extend of many locks in one statement ($1 names, $2 owners, $3 ttls in ms,
 * $4 channel): a row `i` (the 1-based place in the arrays) per lock extended,
 * as {@link extendSql} per lock (owner-checked, a live lease; a shorter lease
 * notifies waiters). Rows are locked in name order: two batches never deadlock.
 * Plain locks only: `holders` entries go by {@link extendPermitManySql}.
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

/**
 * Extend of many shared holds and permits in one statement ($1 names, $2
 * owners, $3 ttls in ms, $4 channel): a row `i` (the 1-based place in the
 * arrays) per live `holders` entry of that owner it extended, as
 * {@link extendPermitSql} per entry (the row's lease covers the new one; a
 * shorter lease notifies waiters). Rows are locked in name order.
 * @internal
 */
export const extendPermitManySql = (n: PostgresLockTables): string => `WITH req AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS r(name, owner, ttl, i)
), old AS (
  SELECT l.name, l.holders FROM ${n.locks} l WHERE l.name IN (SELECT name FROM req) AND l.holders IS NOT NULL ORDER BY l.name FOR UPDATE
), hit AS (
  SELECT r.i, r.name, r.owner, r.ttl, (h->>'e')::float8 AS ends FROM req r JOIN old ON old.name = r.name CROSS JOIN LATERAL jsonb_array_elements(old.holders) h
  WHERE h->>'o' = r.owner AND (h->>'e')::float8 > ${NOW_MS}
), u AS (
  UPDATE ${n.locks} l SET expires_at = greatest(l.expires_at, clock_timestamp() + (SELECT max(hit.ttl) FROM hit WHERE hit.name = l.name) ${MS}),
    holders = (SELECT jsonb_agg(CASE WHEN x.ttl IS NULL THEN e.h ELSE jsonb_set(e.h, '{e}', to_jsonb(${NOW_MS} + x.ttl)) END ORDER BY e.ord)
      FROM jsonb_array_elements(l.holders) WITH ORDINALITY e(h, ord)
      CROSS JOIN LATERAL (SELECT max(hit.ttl) AS ttl FROM hit WHERE hit.name = l.name AND hit.owner = e.h->>'o' AND (e.h->>'e')::float8 > ${NOW_MS}) x)
  WHERE l.name IN (SELECT name FROM hit) RETURNING l.name
)
SELECT hit.i::int AS i, CASE WHEN ${NOW_MS} + hit.ttl < hit.ends THEN pg_notify($4, ':' || hit.name) END IS NULL AS ok FROM hit WHERE hit.name IN (SELECT name FROM u)`;
