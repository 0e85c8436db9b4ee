/**
 * The release statements of the PostgreSQL store: a plain lock's release
 * grants the key to the first live waiter in line in the same statement when
 * that waiter's queue entry says how (a direct grant); a shared hold's or a
 * permit's release notifies it.
 */
import type { PostgresLockTables } from './postgres-lock-schema.sql.js';
import { ENTRY_OF, LIVE, MS, NEXT } from './postgres-lock-fragments.sql.js';

/** The first live waiter of name $1, as a NOTIFY payload's `<ticket>,<ms>`. */
const nextOf = (n: PostgresLockTables): string =>
  `nxt AS (SELECT ${NEXT} AS next FROM ${n.waiters} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() ORDER BY w.ticket LIMIT 1)`;

/**
 * Release ($1 name, $2 owner, $3 channel) a plain lock: owner-checked, and
 * the row stays (it carries the name's fencing counter; see `pruneSql`).
 * NOTIFY goes out in the same statement, so waiters in every process learn of
 * it when it commits; its payload (also answered as `next`) is
 * `<ticket>,<ms>[,<token>,<at>]:<name>`.
 *
 * When the first live waiter in line (by ticket; its queue entry locked, so a
 * waiter that leaves meanwhile is either granted or gone) is a plain one that
 * gave `grant_ms` and `fences` (newer instances do), the row passes to it
 * here: its owner, a lease of `grant_ms` (at most the waiter lease: a waiter
 * whose process died holds the line no longer than its queue entry would
 * have), a block of `fences` tokens drawn from the name's counter, and its
 * queue entry goes. The payload then names that ticket, the lease `<ms>`, the
 * first `<token>` of the block and `<at>`, the grant's time (epoch ms,
 * database clock): its waiter starts without another statement.
 *
 * Otherwise the row is freed and the payload is `<ticket>,<ms>`: the first
 * live ticket and the ms left of its queue entry's lease, which asks again
 * (empty: nobody waits, or everyone looks again). `live`: the released lease
 * had not ended.
 * @internal
 */
export const releaseSql = (n: PostgresLockTables): string => `WITH old AS (
  SELECT name, expires_at > clock_timestamp() AS live FROM ${n.locks} WHERE name = $1 AND owner = $2 FOR UPDATE
), nxt AS (
  SELECT w.ticket, w.owner, w.grant_ms, w.fences, ${NEXT} AS next FROM ${n.waiters} w
  WHERE EXISTS (SELECT 1 FROM old) AND w.name = $1 AND w.expires_at > clock_timestamp() ORDER BY w.ticket LIMIT 1 FOR UPDATE
), g AS (
  SELECT * FROM nxt WHERE nxt.grant_ms IS NOT NULL AND nxt.fences IS NOT NULL
), r AS (
  UPDATE ${n.locks} l SET owner = g.owner, fencing_token = l.fencing_token + coalesce(g.fences, 0),
    expires_at = coalesce(clock_timestamp() + g.grant_ms ${MS}, l.expires_at), acquired_at = CASE WHEN g.ticket IS NULL THEN l.acquired_at ELSE clock_timestamp() END
  FROM old LEFT JOIN g ON true WHERE l.name = old.name
  RETURNING CASE WHEN g.ticket IS NOT NULL THEN g.ticket::text || ',' || ceil(g.grant_ms)::bigint || ',' || (l.fencing_token - g.fences + 1)::text || ','
    || (extract(epoch FROM l.acquired_at) * 1000)::float8::text END AS granted
), dequeued AS (
  DELETE FROM ${n.waiters} w USING g WHERE w.ticket = g.ticket AND EXISTS (SELECT 1 FROM r)
), x AS (
  SELECT old.name, old.live, coalesce((SELECT granted FROM r), (SELECT next FROM nxt)) AS next FROM old
)
SELECT x.live, x.next, pg_notify($3, coalesce(x.next, '') || ':' || x.name) IS NULL AS notified FROM x`;

/**
 * {@link releaseSql} for the owner's entry in `holders`: removes it (and the
 * dead ones), and notifies the first live waiter (`<ticket>,<ms>`), which asks
 * again. `live` is read from the statement's snapshot: only the owner changes
 * its entry's lease.
 * @internal
 */
export const releasePermitSql = (n: PostgresLockTables): string => `WITH r AS (
  UPDATE ${n.locks} l SET holders = coalesce((SELECT jsonb_agg(h) FROM ${LIVE} AND h->>'o' <> $2), '[]'::jsonb)
  WHERE ${ENTRY_OF} RETURNING l.name, EXISTS (SELECT 1 FROM ${n.locks} l, ${LIVE} AND l.name = $1 AND h->>'o' = $2) AS live
), ${nextOf(n)}
SELECT r.live, nxt.next, pg_notify($3, coalesce(nxt.next, '') || ':' || r.name) IS NULL AS notified FROM r LEFT JOIN nxt ON true`;
