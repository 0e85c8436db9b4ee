/*
 * Deletes the queue entries of a name whose lease ended over a minute ago
 * (their processes died), run when a new waiter queues.
 * Input:
 *   ? name
 * Output: affected rows, the entries deleted.
 */
DELETE FROM {{waiters}} WHERE name = ? AND expires_at < UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE
