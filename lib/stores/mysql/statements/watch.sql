/*
 * The watcher's look at the names this process waits for: per name with a
 * row, whether it is free, how long its plain holder's lease still runs, its
 * group holders, and the first live waiter in line with what it asks. One
 * statement for all of them.
 * Input:
 *   ? the names, a JSON array of strings
 * Output: one row per name that has a row: name, held_us (plain lease left in
 *   microseconds, 0 or less when free), token (the fencing token: it moves
 *   with every grant), holders, permits, now_us (the database clock,
 *   microseconds since the epoch), head (the first live ticket, or NULL),
 *   head_mode and head_permits (what it asks).
 */
SELECT l.name, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), l.expires_at) * (l.owner IS NOT NULL) AS held_us, l.fencing_token AS token,
  l.holders, l.permits, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) AS now_us, h.ticket AS head, h.mode AS head_mode, h.permits AS head_permits
FROM JSON_TABLE(?, '$[*]' COLUMNS (name VARCHAR(2000) CHARACTER SET utf8mb4 PATH '$')) j
JOIN {{locks}} l ON l.name = CAST(j.name AS BINARY)
LEFT JOIN {{waiters}} h ON h.ticket = (
  SELECT MIN(w.ticket) FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > UTC_TIMESTAMP(6)
)
