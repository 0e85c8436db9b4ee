/*
 * Deletes the rows of the names prune-candidates.sql read, each only if it
 * still meets prune.sql's rule now, under its row lock (a lock call that
 * used the name meanwhile keeps it): by primary key, in name order, so the
 * statement locks no other row.
 * Input:
 *   ? the names, a JSON array of names in hexadecimal, in name order
 *   ? age, in microseconds
 *   ? age, in microseconds
 * Output: affected rows, the rows deleted.
 */
DELETE l FROM JSON_TABLE(?, '$[*]' COLUMNS (h VARCHAR(4000) CHARACTER SET ascii PATH '$')) j
  STRAIGHT_JOIN {{locks}} l ON l.name = UNHEX(j.h)
WHERE l.expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
  AND l.fencing_token < TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) - ?
  AND NOT EXISTS (SELECT 1 FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > UTC_TIMESTAMP(6))
