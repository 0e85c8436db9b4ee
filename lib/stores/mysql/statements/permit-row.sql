/*
 * Reads and row-locks (until the transaction ends) a name's lock row, for a
 * shared hold or a semaphore's permit: the decision is made on it, under its
 * row lock, so two callers never both take the last permit.
 * Input:
 *   ? name
 * Output: no row when the name has none; else one row: plain_held (1 when a
 *   plain holder's lease runs), fencing_token, holders, permits, now_us (the
 *   database clock, microseconds since the epoch).
 */
SELECT owner IS NOT NULL AND expires_at > UTC_TIMESTAMP(6) AS plain_held, fencing_token, holders, permits,
  TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)) AS now_us
FROM {{locks}} WHERE name = ? FOR UPDATE
