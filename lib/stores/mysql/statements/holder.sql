/*
 * Who holds a name now: its plain holder with a live lease, or its group
 * holders (the caller picks a live one).
 * Input:
 *   ? name
 * Output: no row when free; else owner and held_us (the plain holder and its
 *   lease left in microseconds, or NULL), holders, now_us (the database clock,
 *   microseconds since the epoch).
 */
SELECT CASE WHEN owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) THEN CAST(owner AS CHAR CHARACTER SET utf8mb4) END AS owner,
  TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS held_us, holders, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) AS now_us
FROM {{locks}} WHERE name = ? AND ((owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6)) OR holders IS NOT NULL)
