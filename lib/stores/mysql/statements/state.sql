/*
 * What an attempt that was not granted found: whether the name has a row,
 * how long its plain holder's lease still runs, whether this owner holds it
 * (a retried attempt whose first try had committed), the group holders, and
 * the greatest other limit than the caller's that a live exclusive waiter
 * asked (for the limit check of a first attempt).
 * Input:
 *   ? owner
 *   ? the caller's limit
 *   ? name
 * Output: no row when the name has none; else one row: held_us (the plain
 *   holder's lease left, in microseconds; 0 or less when free), mine (the
 *   row's fencing counter when the owner holds it plainly: the last token of
 *   its grant's block; else NULL), holders,
 *   permits, now_us (the database clock, microseconds since the epoch),
 *   other (a live exclusive waiter's other limit, or NULL).
 */
SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), l.expires_at) * (l.owner IS NOT NULL) AS held_us,
  CASE WHEN l.owner = ? AND l.expires_at > UTC_TIMESTAMP(6) THEN l.fencing_token END AS mine,
  l.holders, l.permits, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) AS now_us,
  (SELECT MAX(w.permits) FROM {{waiters}} w
   WHERE w.name = l.name AND w.expires_at > UTC_TIMESTAMP(6) AND w.mode = 'exclusive' AND w.permits <> ?) AS other
FROM {{locks}} l WHERE l.name = ?
