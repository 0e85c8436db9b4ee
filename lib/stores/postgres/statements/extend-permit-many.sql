/*
  Extends many shared holds and permits in one statement: each live entry in
  `holders` of an owner asked, as extend-permit.sql each (the row's lease
  covers the new one; a shorter lease notifies waiters). Rows are locked in
  name order.

  Input:
    $1 names – the locks' names (text[])
    $2 owners – their owner tokens (text[])
    $3 ttls – their new leases, in ms (float8[])
    $4 channel – the NOTIFY channel (the table name as configured)
  Output:
    a row per entry extended: i – its 1-based place in the arrays; ok – true
*/
WITH req AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS r(name, owner, ttl, i)
), old AS (
  SELECT l.name, l.holders FROM {{locks}} l WHERE l.name IN (SELECT name FROM req) AND l.holders IS NOT NULL ORDER BY l.name FOR UPDATE
), hit AS (
  SELECT r.i, r.name, r.owner, r.ttl, (h->>'e')::float8 AS ends
  FROM req r JOIN old ON old.name = r.name CROSS JOIN LATERAL jsonb_array_elements(old.holders) h
  WHERE h->>'o' = r.owner AND (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
), u AS (
  UPDATE {{locks}} l
  SET expires_at = greatest(l.expires_at, clock_timestamp() + (SELECT max(hit.ttl) FROM hit WHERE hit.name = l.name) * interval '1 millisecond'),
    holders = (
      SELECT jsonb_agg(CASE WHEN x.ttl IS NULL THEN e.h ELSE jsonb_set(e.h, '{e}', to_jsonb((extract(epoch FROM clock_timestamp()) * 1000)::float8 + x.ttl)) END
        ORDER BY e.ord)
      FROM jsonb_array_elements(l.holders) WITH ORDINALITY e(h, ord)
      CROSS JOIN LATERAL (
        SELECT max(hit.ttl) AS ttl FROM hit
        WHERE hit.name = l.name AND hit.owner = e.h->>'o' AND (e.h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
      ) x)
  WHERE l.name IN (SELECT name FROM hit) RETURNING l.name
)
SELECT hit.i::int AS i,
  CASE WHEN (extract(epoch FROM clock_timestamp()) * 1000)::float8 + hit.ttl < hit.ends THEN pg_notify($4, ':' || hit.name) END IS NULL AS ok
FROM hit WHERE hit.name IN (SELECT name FROM u)
