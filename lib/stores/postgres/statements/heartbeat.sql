/*
  Renews queue entries: their waiting process is alive.

  Input:
    $1 tickets – the entries to renew (bigint[])
    $2 lease – their new lease, in ms
  Output:
    one row: now_ms – the database clock, epoch ms
*/
WITH u AS (
  UPDATE {{waiters}} SET expires_at = clock_timestamp() + $2::float8 * interval '1 millisecond' WHERE ticket = ANY($1::bigint[])
)
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms
