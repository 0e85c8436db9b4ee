/*
 * Releases a plain lock the owner holds with a live lease and, when no live
 * waiter is queued for the name, grants it to the next caller of the same
 * process in the same statement (a new block of fencing tokens, as
 * acquire.sql: the insert id carries the grant's first token); with a waiter
 * queued, the name is freed for it and the caller queues behind it. Sent for
 * a release and the next waiter's acquire coalesced (LockProvider.coalesce).
 * Input:
 *   ? name
 *   ? next owner
 *   ? fences: tokens the next grant reserves (1: its own only)
 *   ? ttl of the next grant, in microseconds
 *   ? name
 *   ? owner
 * Output: affected rows 1 when the owner held it (else 0: nothing changed);
 *   the insert id is the next owner's fencing token when it was granted, 0
 *   when the name was freed for the waiters queued.
 */
UPDATE {{locks}} l
LEFT JOIN (SELECT 1 AS queued FROM {{waiters}} w WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6) LIMIT 1) q ON 1
SET l.owner = IF(q.queued IS NULL, ?, NULL),
  l.fencing_token = IF(q.queued IS NULL,
    LAST_INSERT_ID(GREATEST(l.fencing_token + 1, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)))) + ? - 1,
    l.fencing_token),
  l.expires_at = IF(q.queued IS NULL, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6)),
  l.acquired_at = IF(q.queued IS NULL, UTC_TIMESTAMP(6), l.acquired_at)
WHERE l.name = ? AND l.owner = ? AND l.expires_at > UTC_TIMESTAMP(6)
