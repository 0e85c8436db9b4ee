/*
 * Frees a lock the owner holds with a live lease. The row stays: it carries
 * the name's fencing counter. A lease that had ended is left as it is (the
 * owner holds it no more).
 * Input:
 *   ? name
 *   ? owner
 * Output: affected rows 1 when the owner held it.
 */
UPDATE {{locks}} SET owner = NULL, expires_at = UTC_TIMESTAMP(6)
WHERE name = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)
