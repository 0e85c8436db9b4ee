/*
 * The watcher's look at the names this process waits for: per name with a
 * row, whether it is free, how long its holder's lease still runs, and the
 * first live waiter in line. One statement for all of them.
 * Input:
 *   ? the names, a JSON array of strings
 * Output: one row per name that has a row: name, held_us (lease left in
 *   microseconds, 0 or less when free), head (the first live ticket, or NULL),
 *   token (the fencing token: it moves with every grant).
 */
SELECT l.name, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), l.expires_at) * (l.owner IS NOT NULL) AS held_us, l.fencing_token AS token,
  (SELECT MIN(w.ticket) FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > UTC_TIMESTAMP(6)) AS head
FROM JSON_TABLE(?, '$[*]' COLUMNS (name VARCHAR(2000) CHARACTER SET utf8mb4 PATH '$')) j
JOIN {{locks}} l ON l.name = CAST(j.name AS BINARY)
