/*
  Releases the owner's entry in `holders` (a shared hold or a permit; see
  acquire-permit.sql): removes it (and the dead ones), and notifies the first
  live waiter (`<ticket>,<ms>:<name>`), which asks again. `live` is read from
  the statement's snapshot: only the owner changes its entry's lease.

  Input:
    $1 name – the lock's name
    $2 owner – the holder's owner token
    $3 channel – the NOTIFY channel (the table name as configured)
  Output:
    no row when the row has no entry of $2; else one row:
    live – whether the released lease had not ended
    next – `<ticket>,<ms>` of the first live waiter (NULL when nobody waits)
    notified – true
*/
WITH r AS (
  UPDATE {{locks}} l SET holders = coalesce((
    SELECT jsonb_agg(h) FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
    WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND h->>'o' <> $2
  ), '[]'::jsonb)
  WHERE l.name = $1 AND l.holders @> jsonb_build_array(jsonb_build_object('o', $2::text))
  RETURNING l.name, EXISTS (
    SELECT 1 FROM {{locks}} l, jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
    WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8 AND l.name = $1 AND h->>'o' = $2
  ) AS live
), nxt AS (
  SELECT w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint AS next
  FROM {{waiters}} w WHERE w.name = $1 AND w.expires_at > clock_timestamp() ORDER BY w.ticket LIMIT 1
)
SELECT r.live, nxt.next, pg_notify($3, coalesce(nxt.next, '') || ':' || r.name) IS NULL AS notified FROM r LEFT JOIN nxt ON true
