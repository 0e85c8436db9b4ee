/*
  A release (release.sql) and the first attempt of the same process's next
  waiter on that name (acquire.sql with a waiter lease), in one statement:
  one round trip and one commit, so one WAL flush per hand-off between
  processes where the two statements in a row took two, and the second
  flush held up the next hand-off (docs/performance.md, "Where a PostgreSQL
  hand-off spends its time"). The engine sends them together
  (`LockProvider.coalesce`) when its turn on a name ends with a waiter left.

  The release part is release.sql's, its NOTIFY included. The next waiter
  ($4) then queues behind everyone: its ticket is greater than every one
  the statement sees, the one the release granted included. When nobody
  waits it takes the row in the same update instead (as acquire.sql would
  right after the release: a block of $7 tokens from the name's counter,
  a lease of $5 ms). When the release found nothing to release (the lease
  had ended), the waiter takes a ticket and asks again at once (held_ms 0),
  as a first attempt of its own would.

  Input:
    $1 name – the lock's name
    $2 owner – the holder's owner token
    $3 channel – the NOTIFY channel (the table name as configured)
    $4 next owner – the next waiter's owner token
    $5 ttl – the next waiter's lease, in ms
    $6 waiter lease – the lease of its queue entry, in ms
    $7 fences – fencing tokens its grant reserves
    $8 direct lease – the lease a release that grants its queue entry
       directly gives it, in ms (NULL: its waiter asks again when notified)
  Output:
    one row:
    released – whether $2 held the row (release.sql answers no row if not)
    live, next, notified – release.sql's answer
    token, ticket, mine, held_ms, ahead_ms, conflict, now_ms, mine_ms –
      acquire.sql's answer for the next waiter (mine and mine_ms NULL)
*/
WITH old AS (
  SELECT name, expires_at > clock_timestamp() AS live FROM {{locks}} WHERE name = $1 AND owner = $2 FOR UPDATE
), nxt AS (
  SELECT w.ticket, w.owner, w.grant_ms, w.fences,
    w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint AS next
  FROM {{waiters}} w
  WHERE EXISTS (SELECT 1 FROM old) AND w.name = $1 AND w.expires_at > clock_timestamp() ORDER BY w.ticket LIMIT 1 FOR UPDATE
), g AS (
  SELECT * FROM nxt WHERE nxt.grant_ms IS NOT NULL AND nxt.fences IS NOT NULL
), ahead AS (
  -- the live waiters (all of them are ahead of the next waiter), and the greatest other limit than 1 an exclusive one asked
  SELECT count(*) AS n, min(w.expires_at) AS soonest, max(w.permits) FILTER (WHERE w.mode = 'exclusive' AND w.permits <> 1) AS other
  FROM {{waiters}} w WHERE w.name = $1 AND w.expires_at > clock_timestamp()
), clash AS (
  -- the other limit than 1 the key is held or awaited with (the next waiter then neither waits nor is granted)
  SELECT coalesce(ahead.other, nullif((
    SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp() THEN 1
      WHEN EXISTS (
        SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND h->>'m' = 'exclusive'
      ) THEN l.permits END
    FROM {{locks}} l WHERE l.name = $1), 1)) AS recorded
  FROM ahead
), take AS (
  -- nobody waits: the next waiter takes the row the release frees
  SELECT true AS yes FROM old, ahead, clash WHERE ahead.n = 0 AND clash.recorded IS NULL
), r AS (
  UPDATE {{locks}} l SET owner = coalesce(g.owner, CASE WHEN take.yes THEN $4::text END),
    fencing_token = l.fencing_token + coalesce(g.fences, CASE WHEN take.yes THEN $7::bigint END, 0),
    expires_at = coalesce(clock_timestamp() + g.grant_ms * interval '1 millisecond',
      CASE WHEN take.yes THEN clock_timestamp() + $5::float8 * interval '1 millisecond' END, l.expires_at),
    acquired_at = CASE WHEN g.ticket IS NULL AND take.yes IS NULL THEN l.acquired_at ELSE clock_timestamp() END,
    holders = CASE WHEN take.yes THEN NULL ELSE l.holders END, permits = CASE WHEN take.yes THEN NULL ELSE l.permits END
  FROM old LEFT JOIN g ON true LEFT JOIN take ON true WHERE l.name = old.name
  RETURNING CASE WHEN g.ticket IS NOT NULL THEN g.ticket::text || ',' || ceil(g.grant_ms)::bigint || ',' || (l.fencing_token - g.fences + 1)::text || ','
    || (extract(epoch FROM l.acquired_at) * 1000)::float8::text END AS granted,
    CASE WHEN take.yes THEN l.fencing_token - $7::bigint + 1 END AS taken
), dequeued AS (
  DELETE FROM {{waiters}} w USING g WHERE w.ticket = g.ticket AND EXISTS (SELECT 1 FROM r)
), enqueued AS (
  INSERT INTO {{waiters}} (name, owner, expires_at, mode, permits, grant_ms, fences)
  SELECT $1, $4::text, clock_timestamp() + $6::float8 * interval '1 millisecond', 'exclusive', 1, $8::float8, $7::int
  WHERE NOT EXISTS (SELECT 1 FROM take) AND NOT EXISTS (SELECT 1 FROM clash WHERE recorded IS NOT NULL)
  RETURNING ticket
), pruned AS (
  DELETE FROM {{waiters}} w WHERE w.name = $1 AND w.expires_at < clock_timestamp() - interval '1 minute'
), x AS (
  SELECT old.name, old.live, coalesce((SELECT granted FROM r), (SELECT next FROM nxt)) AS next FROM old
)
SELECT EXISTS (SELECT 1 FROM old) AS released,
  (SELECT live FROM x) AS live,
  (SELECT next FROM x) AS next,
  (SELECT pg_notify($3, coalesce(x.next, '') || ':' || x.name) IS NULL FROM x) AS notified,
  (SELECT taken FROM r)::float8 AS token,
  (SELECT ticket::text FROM enqueued) AS ticket,
  NULL::float8 AS mine,
  CASE WHEN NOT EXISTS (SELECT 1 FROM old) THEN 0::float8
    WHEN EXISTS (SELECT 1 FROM g) THEN (SELECT g.grant_ms FROM g)::float8 END AS held_ms,
  (SELECT extract(epoch FROM ahead.soonest - clock_timestamp()) * 1000 FROM ahead)::float8 AS ahead_ms,
  (SELECT recorded FROM clash) AS conflict,
  (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
  NULL::float8 AS mine_ms
