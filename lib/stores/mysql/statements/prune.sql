/*
 * Deletes a batch of the rows of lock names unused for long: the lease ended
 * more than the given age ago, the fencing counter is behind the database
 * clock (in microseconds) by at least that age (so a row created again starts
 * above every token the deleted one gave), and no live waiter is queued.
 * A row a lock call holds locked now is deleted only if it still qualifies
 * once that call committed.
 * Input:
 *   ? age, in microseconds
 *   ? age, in microseconds
 *   ? how many rows at most, as a string (an integer for LIMIT)
 * Output: affected rows, the rows deleted.
 */
DELETE FROM {{locks}}
WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND
  AND fencing_token < TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) - ?
  AND NOT EXISTS (SELECT 1 FROM {{waiters}} w WHERE w.name = {{locks}}.name AND w.expires_at > UTC_TIMESTAMP(6))
LIMIT ?
