/*
  Releases a plain lock: owner-checked, and the row stays (it carries the
  name's fencing counter; see prune.sql). NOTIFY goes out in the same
  statement, so waiters in every process learn of it when it commits; its
  payload (also answered as `next`) is `<ticket>,<ms>[,<token>,<at>]:<name>`.

  When the first live waiter in line (by ticket; its queue entry locked, so a
  waiter that leaves meanwhile is either granted or gone) is a plain one that
  gave `grant_ms` and `fences` (newer instances do), the row passes to it
  here: its owner, a lease of `grant_ms` (at most the waiter lease: a waiter
  whose process died holds the line no longer than its queue entry would
  have), a block of `fences` tokens drawn from the name's counter, and its
  queue entry goes. The payload then names that ticket, the lease `<ms>`, the
  first `<token>` of the block and `<at>`, the grant's time (epoch ms,
  database clock): its waiter starts without another statement.

  Otherwise the row is freed and the payload is `<ticket>,<ms>`: the first
  live ticket and the ms left of its queue entry's lease, which asks again
  (empty: nobody waits, or everyone looks again).

  Input:
    $1 name – the lock's name
    $2 owner – the holder's owner token
    $3 channel – the NOTIFY channel (the table name as configured)
  Output:
    no row when $2 does not hold the row; else one row:
    live – whether the released lease had not ended
    next – the payload before `:<name>` (NULL when nobody waits)
    notified – true
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
), r AS (
  UPDATE {{locks}} l SET owner = g.owner, fencing_token = l.fencing_token + coalesce(g.fences, 0),
    expires_at = coalesce(clock_timestamp() + g.grant_ms * interval '1 millisecond', l.expires_at),
    acquired_at = CASE WHEN g.ticket IS NULL THEN l.acquired_at ELSE clock_timestamp() END
  FROM old LEFT JOIN g ON true WHERE l.name = old.name
  RETURNING CASE WHEN g.ticket IS NOT NULL THEN g.ticket::text || ',' || ceil(g.grant_ms)::bigint || ',' || (l.fencing_token - g.fences + 1)::text || ','
    || (extract(epoch FROM l.acquired_at) * 1000)::float8::text END AS granted
), dequeued AS (
  DELETE FROM {{waiters}} w USING g WHERE w.ticket = g.ticket AND EXISTS (SELECT 1 FROM r)
), x AS (
  SELECT old.name, old.live, coalesce((SELECT granted FROM r), (SELECT next FROM nxt)) AS next FROM old
)
SELECT x.live, x.next, pg_notify($3, coalesce(x.next, '') || ':' || x.name) IS NULL AS notified FROM x
