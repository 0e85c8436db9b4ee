/*
 * What an attempt that was not granted found: whether the name has a row,
 * how long its holder's lease still runs, and whether this owner holds it
 * (a retried attempt whose first try had committed).
 * Input:
 *   ? owner
 *   ? name
 * Output: no row when the name has none; else one row: held_us (the
 *   holder's lease left, in microseconds; 0 or less when free), mine (the
 *   fencing token when the owner holds it, else NULL).
 */
SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) * (owner IS NOT NULL) AS held_us,
  CASE WHEN owner = ? AND expires_at > UTC_TIMESTAMP(6) THEN fencing_token END AS mine
FROM {{locks}} WHERE name = ?
