/*
  One page of the held locks under a prefix, in name order (the primary key):
  a row per live holder (the plain holder, or each live entry in `holders`;
  see acquire-permit.sql), with its mode and the key's permits, and the
  name's live waiters.

  Input:
    $1 prefix – the names' prefix ('' for all)
    $2 cursor – the last name of the previous page (NULL: from the start)
    $3 limit – names per page at most
  Output:
    a row per live holder, by name then token: name, owner, token,
    remaining_ms (lease left), acquired_ms (grant time, epoch ms),
    mode ('exclusive' or 'shared'), permits, waiters (live waiters of the name)
*/
WITH page AS (
  SELECT l.* FROM {{locks}} l
  WHERE l.name >= $1 AND starts_with(l.name, $1) AND ($2::text IS NULL OR l.name > $2::text)
    AND (l.owner IS NOT NULL AND l.expires_at > clock_timestamp() OR EXISTS (
      SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
      WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8))
  ORDER BY l.name LIMIT $3::int
)
SELECT l.name, x.owner, x.token, x.remaining_ms, x.acquired_ms, x.mode, x.permits,
  (SELECT count(*) FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())::int AS waiters
FROM page l CROSS JOIN LATERAL (
  SELECT l.owner, l.fencing_token::float8 AS token, (extract(epoch FROM l.expires_at - clock_timestamp()) * 1000)::float8 AS remaining_ms,
    (extract(epoch FROM l.acquired_at) * 1000)::float8 AS acquired_ms, 'exclusive' AS mode, 1 AS permits
  WHERE l.owner IS NOT NULL AND l.expires_at > clock_timestamp()
  UNION ALL
  SELECT h->>'o', (h->>'t')::float8, (h->>'e')::float8 - (extract(epoch FROM clock_timestamp()) * 1000)::float8, (h->>'s')::float8, h->>'m',
    CASE WHEN h->>'m' = 'shared' THEN 1 ELSE l.permits END
  FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8
) x
ORDER BY l.name, x.token
