/*
  Removes the queue entries of waiters that left, and notifies the next in
  line of each name (`<ticket>,<ms>:<name>`; it may be in another process).
  A ticket it does not find was granted by a release meanwhile (or had lapsed
  long ago), and its waiter releases.

  Input:
    $1 tickets – the entries to remove (bigint[])
    $2 channel – the NOTIFY channel (the table name as configured)
  Output:
    one row:
    gone – the tickets it removed (text[]; NULL when none)
    names – how many names it notified
*/
WITH d AS (
  DELETE FROM {{waiters}} WHERE ticket = ANY($1::bigint[]) RETURNING name, ticket
), x AS (
  SELECT pg_notify($2, coalesce((
    SELECT w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint FROM {{waiters}} w
    WHERE w.name = x.name AND w.expires_at > clock_timestamp() AND w.ticket <> ALL($1::bigint[]) ORDER BY w.ticket LIMIT 1
  ), '') || ':' || x.name) IS NULL AS notified
  FROM (SELECT DISTINCT name FROM d) x
)
SELECT (SELECT array_agg(ticket::text) FROM d) AS gone, (SELECT count(*) FROM x)::int AS names
