/*
 * One page of the held locks whose name starts with a prefix, after a
 * cursor, in name order (the primary key), with each name's live waiters
 * (not counting the entry of a waiter granted the lock, deleted just after).
 * Input:
 *   ? prefix
 *   ? prefix
 *   ? prefix
 *   ? cursor (the last name of the previous page), or NULL
 *   ? cursor again
 *   ? how many names at most, as a string (an integer for LIMIT)
 * Output: rows of name, owner, token, held_us (lease left, microseconds),
 *   acquired_us (grant time, microseconds since the epoch), waiters, and for
 *   group holders (owner NULL): holders, permits, now_us (the database clock).
 */
SELECT CAST(l.name AS CHAR CHARACTER SET utf8mb4) AS name, CAST(l.owner AS CHAR CHARACTER SET utf8mb4) AS owner, l.fencing_token AS token,
  TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), l.expires_at) AS held_us,
  TIMESTAMPDIFF(MICROSECOND, '1970-01-01', l.acquired_at) AS acquired_us,
  (SELECT COUNT(*) FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > UTC_TIMESTAMP(6) AND NOT (w.owner <=> l.owner)) AS waiters,
  l.holders, l.permits, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) AS now_us
FROM {{locks}} l
WHERE l.name >= CAST(? AS BINARY) AND LEFT(l.name, LENGTH(CAST(? AS BINARY))) = CAST(? AS BINARY)
  AND (? IS NULL OR l.name > CAST(? AS BINARY))
  AND l.expires_at > UTC_TIMESTAMP(6) AND (l.owner IS NOT NULL OR l.holders IS NOT NULL)
ORDER BY l.name
LIMIT ?
