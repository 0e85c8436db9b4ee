/*
 * Writes a name's group holders within the transaction that row-locked it
 * (permit-row.sql): no plain holder; the lease end of the row at or after
 * every entry's.
 * Input:
 *   ? fencing token (the last one given)
 *   ? holders, a JSON array, or NULL when none is left
 *   ? permits (the semaphore's limit), or NULL
 *   ? the row's lease from now, in microseconds (0 when no holder is left)
 *   ? name
 * Output: affected rows.
 */
UPDATE {{locks}} SET owner = NULL, fencing_token = ?, holders = ?, permits = ?, expires_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
WHERE name = ?
