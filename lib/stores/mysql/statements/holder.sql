/*
 * Who holds a name now (a live lease).
 * Input:
 *   ? name
 * Output: no row when free; else owner and held_us, the lease left in microseconds.
 */
SELECT CAST(owner AS CHAR CHARACTER SET utf8mb4) AS owner, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) AS held_us
FROM {{locks}} WHERE name = ? AND owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6)
