/*
  Who holds a lock now (a live lease); of several holders, the one whose
  lease ends last.

  Input:
    $1 name – the lock's name
  Output:
    no row when nobody holds it; else one row: owner, ms – lease left
*/
SELECT x.owner, x.ms FROM {{locks}} l CROSS JOIN LATERAL (
  SELECT l.owner, extract(epoch FROM l.expires_at - clock_timestamp()) * 1000 AS ms WHERE l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
  UNION ALL
  SELECT h->>'o', (h->>'e')::float8 - (extract(epoch FROM clock_timestamp()) * 1000)::float8
  FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
) x WHERE l.name = $1 ORDER BY x.ms DESC LIMIT 1
