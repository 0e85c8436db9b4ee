/*
  Extends a plain lock: sets the owner's lease to end $3 ms from now, on the
  database clock, while it is live. When that shortens the lease
  (`holdAtLeast` on release), waiters are notified, so that they look again at
  the new end instead of the old one.

  Input:
    $1 name – the lock's name
    $2 owner – the holder's owner token
    $3 ttl – the new lease, in ms
    $4 channel – the NOTIFY channel (the table name as configured)
  Output:
    one row (ok – true) when extended; no row when $2 holds no live lease
*/
WITH old AS (
  SELECT expires_at FROM {{locks}} WHERE name = $1 AND owner = $2 AND expires_at > clock_timestamp() FOR UPDATE
), u AS (
  UPDATE {{locks}} l SET expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond' FROM old
  WHERE l.name = $1 AND l.owner = $2 RETURNING l.expires_at < old.expires_at AS shorter
)
SELECT CASE WHEN u.shorter THEN pg_notify($4, ':' || $1) END IS NULL AS ok FROM u
