/*
  Acquires as one of several holders: shared ($6 'shared') or one of $7
  exclusive permits (a semaphore), as acquire.sql does (same answer, same
  $1–$5; one fencing token). Granted when the row has no plain holder and its
  live entries admit the request (shared: none exclusive; exclusive: none
  shared, fewer than $7, recorded with limit $7), and no live waiter is ahead.
  Dead entries are dropped on the way. A waiter granted with its ticket
  notifies the next live waiter on channel $8: it may enter too.

  A lock row holds either one plain holder (exclusive, limit 1) in `owner`,
  `expires_at` and `acquired_at`, or several holders (shared, or a
  semaphore's permits) in `holders`: a JSON array of {o: owner, t: fencing
  token, e: lease end, s: grant time (epoch ms, database clock), m: mode},
  with the semaphore's limit in `permits` and `expires_at` at or after every
  entry's lease end (for prune). Every grant is decided on the row itself,
  under its row lock, so two statements never both take the last permit. An
  entry is live while its `e` is after the database clock.

  Input:
    $1 name – the lock's name
    $2 owner – the caller's owner token
    $3 ttl – the lease, in ms
    $4 ticket – the waiter's ticket, or NULL for a first attempt
    $5 waiter lease – the lease of a new queue entry, in ms (NULL: take no ticket)
    $6 mode – 'shared' or 'exclusive'
    $7 limit – the permits of an exclusive request (1 for a shared one)
    $8 channel – the NOTIFY channel (the table name as configured)
  Output:
    one row: token, ticket, mine, held_ms, ahead_ms, conflict, now_ms as
    acquire.sql answers them (`mine`: the token of this owner's live entry),
    and chained – 1 when it notified the next waiter, else 0
*/
WITH ahead AS (
  -- the live waiters ahead (all, or those before ticket $4), and the greatest other limit than $7 an exclusive one asked
  SELECT count(*) AS n, min(w.expires_at) AS soonest, max(w.permits) FILTER (WHERE w.mode = 'exclusive' AND w.permits <> $7::int) AS other
  FROM {{waiters}} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() AND ($4::bigint IS NULL OR w.ticket < $4::bigint)
), granted AS (
  INSERT INTO {{locks}} AS l (name, fencing_token, expires_at, holders, permits)
  SELECT $1, z.t, clock_timestamp() + $3::float8 * interval '1 millisecond',
    jsonb_build_array(jsonb_build_object('o', $2::text, 't', z.t, 'e', (extract(epoch FROM clock_timestamp()) * 1000)::float8 + $3::float8,
      's', (extract(epoch FROM clock_timestamp()) * 1000)::float8, 'm', $6::text)),
    CASE WHEN $6::text = 'exclusive' THEN $7::int END
  FROM ahead, (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS t) z WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
    SET owner = NULL, fencing_token = l.fencing_token + 1, expires_at = greatest(l.expires_at, EXCLUDED.expires_at), permits = EXCLUDED.permits,
      holders = coalesce((
        SELECT jsonb_agg(h) FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
      ), '[]'::jsonb) || jsonb_build_array(jsonb_build_object('o', $2::text, 't', l.fencing_token + 1,
        'e', (extract(epoch FROM clock_timestamp()) * 1000)::float8 + $3::float8, 's', (extract(epoch FROM clock_timestamp()) * 1000)::float8, 'm', $6::text))
    WHERE (l.owner IS NULL OR l.expires_at <= clock_timestamp()) AND (
      SELECT CASE WHEN $6::text = 'shared' THEN bool_and(h->>'m' = 'shared') IS NOT FALSE
        ELSE bool_and(h->>'m' = 'exclusive') IS NOT FALSE AND count(*) < $7::int AND (count(*) = 0 OR l.permits = $7::int) END
      FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8)
  RETURNING l.fencing_token
), clash AS (
  -- a first exclusive attempt not granted: the other limit than $7 the key is held or awaited with
  SELECT coalesce(ahead.other, nullif((
    SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp() THEN 1
      WHEN EXISTS (
        SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND h->>'m' = 'exclusive'
      ) THEN l.permits END
    FROM {{locks}} l WHERE l.name = $1), $7::int)) AS recorded
  FROM ahead WHERE $4::bigint IS NULL AND $6::text = 'exclusive' AND NOT EXISTS (SELECT 1 FROM granted)
), dequeued AS (
  DELETE FROM {{waiters}} w WHERE $4::bigint IS NOT NULL AND w.ticket = $4::bigint AND EXISTS (SELECT 1 FROM granted)
), enqueued AS (
  -- a release never grants these entries directly: their waiter asks again when notified
  INSERT INTO {{waiters}} (name, owner, expires_at, mode, permits, grant_ms, fences)
  SELECT $1, $2, clock_timestamp() + $5::float8 * interval '1 millisecond', $6::text, $7::int, NULL::float8, NULL::int
  WHERE $5::float8 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM granted) AND NOT EXISTS (SELECT 1 FROM clash WHERE recorded IS NOT NULL)
  RETURNING ticket
), pruned AS (
  DELETE FROM {{waiters}} w WHERE $5::float8 IS NOT NULL AND w.name = $1 AND w.expires_at < clock_timestamp() - interval '1 minute'
), chained AS (
  SELECT pg_notify($8, w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint || ':' || $1)
  FROM {{waiters}} w
  WHERE $4::bigint IS NOT NULL AND EXISTS (SELECT 1 FROM granted) AND w.name = $1 AND w.ticket > $4::bigint AND w.expires_at > clock_timestamp()
  ORDER BY w.ticket LIMIT 1
)
SELECT (SELECT fencing_token FROM granted)::float8 AS token,
  (SELECT ticket::text FROM enqueued) AS ticket,
  (SELECT (
     SELECT (h->>'t')::float8 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
     WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND h->>'o' = $2 LIMIT 1
   ) FROM {{locks}} l WHERE l.name = $1)::float8 AS mine,
  (SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp() THEN extract(epoch FROM l.expires_at - clock_timestamp()) * 1000
     ELSE (
       SELECT min((h->>'e')::float8) FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
       WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
     ) - (extract(epoch FROM clock_timestamp()) * 1000)::float8 END
    FROM {{locks}} l WHERE l.name = $1)::float8 AS held_ms,
  (SELECT extract(epoch FROM ahead.soonest - clock_timestamp()) * 1000 FROM ahead)::float8 AS ahead_ms,
  (SELECT recorded FROM clash) AS conflict,
  (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
  (SELECT count(*) FROM chained)::int AS chained
