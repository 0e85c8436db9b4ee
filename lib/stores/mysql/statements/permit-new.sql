/*
 * Creates a free lock row for a name that has none, before a shared or
 * permit request locks it (permit-row.sql). Its fencing counter starts at
 * the database clock in microseconds; a row there already is left as it is.
 * Input:
 *   ? name
 * Output: affected rows 1 when created.
 */
INSERT IGNORE INTO {{locks}} (name, owner, fencing_token, expires_at)
VALUES (?, NULL, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6))
