/*
 * Sets the lease of a lock the owner holds to end ttl from now (longer or
 * shorter), on the database clock.
 * Input:
 *   ? ttl, in microseconds
 *   ? name
 *   ? owner
 * Output: affected rows 1 when the owner held it with a live lease.
 */
UPDATE {{locks}} SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)
