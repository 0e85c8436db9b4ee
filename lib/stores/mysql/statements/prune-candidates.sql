/*
 * Reads (a consistent read: no row locks) a batch of the names the
 * background pruning may delete: by prune.sql's rule (the lease ended more
 * than the age ago, the fencing counter behind the database clock in
 * microseconds by at least the age, no live waiter queued). prune-names.sql
 * deletes them, checking that rule again on each row under its row lock;
 * in name order, the table's own order, so the scan sorts nothing.
 * Input:
 *   ? age, in microseconds
 *   ? age, in microseconds
 *   ? how many names at most, as a string (an integer for LIMIT)
 * Output: rows of h – a name in hexadecimal.
 */
SELECT HEX(name) AS h FROM {{locks}}
WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
  AND fencing_token < TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) - ?
  AND NOT EXISTS (SELECT 1 FROM {{waiters}} w WHERE w.name = {{locks}}.name AND w.expires_at > UTC_TIMESTAMP(6))
ORDER BY name
LIMIT ?
