/*
  Extends the owner's live entry in `holders` (a shared hold or a permit; see
  acquire-permit.sql), as extend.sql does a plain lock; the row's
  `expires_at` stays at or after every entry's end.

  Input:
    $1 name – the lock's name
    $2 owner – the holder's owner token
    $3 ttl – the new lease, in ms
    $4 channel – the NOTIFY channel (the table name as configured)
  Output:
    one row (ok – true) when extended; no row when $2 has no live entry
*/
WITH old AS (
  SELECT (
    SELECT (h->>'e')::float8 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
    WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND h->>'o' = $2 LIMIT 1
  ) AS ends
  FROM {{locks}} l WHERE l.name = $1 AND l.holders @> jsonb_build_array(jsonb_build_object('o', $2::text)) FOR UPDATE
), u AS (
  UPDATE {{locks}} l SET expires_at = greatest(l.expires_at, clock_timestamp() + $3::float8 * interval '1 millisecond'),
    holders = (
      SELECT jsonb_agg(CASE WHEN h->>'o' = $2 THEN jsonb_set(h, '{e}', to_jsonb((extract(epoch FROM clock_timestamp()) * 1000)::float8 + $3::float8)) ELSE h END)
      FROM jsonb_array_elements(l.holders) h)
  FROM old
  WHERE l.name = $1 AND l.holders @> jsonb_build_array(jsonb_build_object('o', $2::text))
    AND old.ends > (extract(epoch FROM clock_timestamp()) * 1000)::float8
  RETURNING (extract(epoch FROM clock_timestamp()) * 1000)::float8 + $3::float8 < old.ends AS shorter
)
SELECT CASE WHEN u.shorter THEN pg_notify($4, ':' || $1) END IS NULL AS ok FROM u
