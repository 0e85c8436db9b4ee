/*
 * Creates the lock row of a name that has none, held by the owner, unless a
 * live waiter is queued for the name. The first fencing token is the
 * database clock in microseconds (ahead of every token of a row of that name
 * pruned earlier), carried back by LAST_INSERT_ID(). A row created meanwhile
 * by another call fails it with a duplicate key (ER_DUP_ENTRY): the caller
 * tries acquire again. The row keeps the last token of the block the grant
 * reserves.
 * Input:
 *   ? name
 *   ? owner
 *   ? fences: tokens the grant reserves (1: its own only)
 *   ? ttl, in microseconds
 *   ? name
 * Output: affected rows 1 when granted, with the fencing token as insert id; 0 when a waiter is queued.
 */
INSERT INTO {{locks}} (name, owner, fencing_token, expires_at, acquired_at)
SELECT ?, ?, LAST_INSERT_ID(TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6))) + ? - 1, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)
FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM {{waiters}} w WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6))
