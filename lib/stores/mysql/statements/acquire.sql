/*
 * Takes the lock row of a name for an owner when no one holds it (no plain
 * holder nor group holders, or every lease ended) and no live waiter is queued before the caller: none at
 * all for a first attempt, none with an earlier ticket for a queued waiter
 * (FIFO across processes). The fencing token goes up by one, or to the
 * database clock in microseconds when that is ahead (a row pruned and created
 * again), and LAST_INSERT_ID() carries it back in the OK packet (no RETURNING
 * in MySQL). The row keeps the last token of the block the grant reserves
 * (fences tokens from the grant's own on), so the next grant draws above it.
 * Every time is the database's clock (UTC, whatever the session time zone).
 * Input:
 *   ? owner
 *   ? fences: tokens the grant reserves (1: its own only)
 *   ? ttl, in microseconds
 *   ? name
 *   ? name
 *   ? ticket of the caller's queue entry, or NULL (a first attempt)
 *   ? the same ticket again
 * Output: affected rows 1 when granted, with the fencing token as insert id;
 *   0 when held, awaited, or the name has no row yet (then acquire-new).
 */
UPDATE {{locks}}
SET owner = ?,
  fencing_token = LAST_INSERT_ID(GREATEST(fencing_token + 1, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)))) + ? - 1,
  expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  acquired_at = UTC_TIMESTAMP(6), holders = NULL, permits = NULL
WHERE name = ? AND ((owner IS NULL AND holders IS NULL) OR expires_at <= UTC_TIMESTAMP(6))
  AND NOT EXISTS (
    SELECT 1 FROM {{waiters}} w
    WHERE w.name = ? AND w.expires_at > UTC_TIMESTAMP(6) AND (? IS NULL OR w.ticket < ?)
  )
