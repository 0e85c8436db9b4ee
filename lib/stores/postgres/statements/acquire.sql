/*
  Acquires a plain lock (exclusive, limit 1) in one statement: inserts the
  row, or takes over a row that no one holds (owner NULL or lease ended, no
  live entry in `holders`), unless a live waiter with an earlier ticket is
  queued for the name (FIFO across processes). A granted waiter leaves the
  queue in the same statement. A first attempt that will wait takes its
  ticket in the same statement when not granted; a new ticket is greater than
  every one the statement sees, so it queues behind all of them. Every time is
  the database's clock.

  A grant draws a block of $6 tokens and answers the first. A new row's
  counter starts from the database clock in microseconds, so a row pruned
  long ago comes back with greater tokens (a counter gains at most 16 per
  grant, far less than one per microsecond). The grant's time goes to
  `acquired_at` (what inspection calls "held since").

  Lock row `l`'s live entries in `holders` (see acquire-permit.sql) are those
  whose lease end `e` (epoch ms) is after the database clock.

  Input:
    $1 name – the lock's name
    $2 owner – the caller's owner token
    $3 ttl – the lease, in ms
    $4 ticket – the waiter's ticket, or NULL for a first attempt
    $5 waiter lease – the lease of a new queue entry, in ms (NULL: take no ticket)
    $6 fences – fencing tokens the grant reserves
    $7 direct lease – the lease a release that grants the new queue entry
       directly gives it, in ms (NULL: its waiter asks again when notified)
  Output:
    one row:
    token – the first fencing token when granted, else NULL
    ticket – the ticket taken (text) when queued, else NULL
    mine – the token when this owner already holds the row (a retry after an
      error whose first attempt had committed)
    held_ms – ms until the holders' soonest lease end (when to look again)
    ahead_ms – ms left of the earliest waiter ahead's queue entry (it may have died)
    conflict – the other limit the key is held or awaited with, for a first
      attempt (it then neither waits nor is granted), else NULL
    now_ms – the database clock, epoch ms
    mine_ms – with `mine`: ms left of that lease
*/
WITH ahead AS (
  -- the live waiters ahead (all, or those before ticket $4), and the greatest other limit than 1 an exclusive one asked
  SELECT count(*) AS n, min(w.expires_at) AS soonest, max(w.permits) FILTER (WHERE w.mode = 'exclusive' AND w.permits <> 1) AS other
  FROM {{waiters}} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() AND ($4::bigint IS NULL OR w.ticket < $4::bigint)
), granted AS (
  INSERT INTO {{locks}} AS l (name, owner, fencing_token, expires_at, acquired_at)
  SELECT $1, $2, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + $6::bigint - 1,
    clock_timestamp() + $3::float8 * interval '1 millisecond', clock_timestamp()
  FROM ahead WHERE ahead.n = 0
  ON CONFLICT (name) DO UPDATE
    SET owner = EXCLUDED.owner, fencing_token = l.fencing_token + $6::bigint, expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at,
      holders = NULL, permits = NULL
    WHERE (l.owner IS NULL OR l.expires_at <= clock_timestamp())
      AND (l.holders IS NULL OR NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8))
  RETURNING l.fencing_token
), clash AS (
  -- a first attempt not granted: the other limit than 1 the key is held or awaited with
  SELECT coalesce(ahead.other, nullif((
    SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp() THEN 1
      WHEN EXISTS (
        SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND h->>'m' = 'exclusive'
      ) THEN l.permits END
    FROM {{locks}} l WHERE l.name = $1), 1)) AS recorded
  FROM ahead WHERE $4::bigint IS NULL AND NOT EXISTS (SELECT 1 FROM granted)
), dequeued AS (
  DELETE FROM {{waiters}} w WHERE $4::bigint IS NOT NULL AND w.ticket = $4::bigint AND EXISTS (SELECT 1 FROM granted)
), enqueued AS (
  INSERT INTO {{waiters}} (name, owner, expires_at, mode, permits, grant_ms, fences)
  SELECT $1, $2, clock_timestamp() + $5::float8 * interval '1 millisecond', 'exclusive', 1, $7::float8, $6::int
  WHERE $5::float8 IS NOT NULL AND NOT EXISTS (SELECT 1 FROM granted) AND NOT EXISTS (SELECT 1 FROM clash WHERE recorded IS NOT NULL)
  RETURNING ticket
), pruned AS (
  DELETE FROM {{waiters}} w WHERE $5::float8 IS NOT NULL AND w.name = $1 AND w.expires_at < clock_timestamp() - interval '1 minute'
)
SELECT (SELECT fencing_token - $6::bigint + 1 FROM granted)::float8 AS token,
  (SELECT ticket::text FROM enqueued) AS ticket,
  (SELECT CASE WHEN l.owner = $2 AND l.expires_at > clock_timestamp() THEN l.fencing_token - $6::bigint + 1 END
    FROM {{locks}} l WHERE l.name = $1)::float8 AS mine,
  (SELECT CASE WHEN l.owner IS NOT NULL AND l.expires_at > clock_timestamp() THEN extract(epoch FROM l.expires_at - clock_timestamp()) * 1000
     ELSE (
       SELECT min((h->>'e')::float8) FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
       WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
     ) - (extract(epoch FROM clock_timestamp()) * 1000)::float8 END
    FROM {{locks}} l WHERE l.name = $1)::float8 AS held_ms,
  (SELECT extract(epoch FROM ahead.soonest - clock_timestamp()) * 1000 FROM ahead)::float8 AS ahead_ms,
  (SELECT recorded FROM clash) AS conflict,
  (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms,
  (SELECT extract(epoch FROM l.expires_at - clock_timestamp()) * 1000 FROM {{locks}} l WHERE l.name = $1 AND l.owner = $2)::float8 AS mine_ms
