/*
  Extends many plain locks in one statement, as extend.sql each
  (owner-checked, a live lease; a shorter lease notifies waiters). Rows are
  locked in name order: two batches never deadlock. Entries in `holders` go by
  extend-permit-many.sql.

  Input:
    $1 names – the locks' names (text[])
    $2 owners – their owner tokens (text[])
    $3 ttls – their new leases, in ms (float8[])
    $4 channel – the NOTIFY channel (the table name as configured)
  Output:
    a row per lock extended: i – its 1-based place in the arrays; ok – true
*/
WITH old AS (
  SELECT l.name, l.owner, l.expires_at, r.ttl, r.i
  FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS r(name, owner, ttl, i)
  JOIN {{locks}} l ON l.name = r.name AND l.owner = r.owner
  WHERE l.expires_at > clock_timestamp() ORDER BY l.name FOR UPDATE OF l
), u AS (
  UPDATE {{locks}} l SET expires_at = clock_timestamp() + old.ttl * interval '1 millisecond' FROM old
  WHERE l.name = old.name AND l.owner = old.owner RETURNING old.i, l.name, l.expires_at < old.expires_at AS shorter
)
SELECT u.i::int AS i, CASE WHEN u.shorter THEN pg_notify($4, ':' || u.name) END IS NULL AS ok FROM u
