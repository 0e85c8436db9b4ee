/*
 * Deletes the queue entries prune-stale-tickets.sql read, each only if its
 * lease still ended over a minute ago: by primary key, so the statement locks
 * no other entry.
 * Input:
 *   ? the tickets, a JSON array of numbers, in order
 * Output: affected rows, the entries deleted.
 */
DELETE w FROM JSON_TABLE(?, '$[*]' COLUMNS (t BIGINT PATH '$')) j
  STRAIGHT_JOIN {{waiters}} w ON w.ticket = j.t
WHERE w.expires_at < UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE
