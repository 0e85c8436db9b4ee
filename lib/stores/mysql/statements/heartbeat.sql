/*
 * Renews the queue entries of this process's waiters: their process is alive.
 * Input:
 *   ? the tickets, a JSON array of numbers
 *   ? lease, in microseconds
 * Output: affected rows, the entries renewed.
 */
UPDATE {{waiters}} w JOIN JSON_TABLE(?, '$[*]' COLUMNS (t BIGINT PATH '$')) j ON w.ticket = j.t
SET w.expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
