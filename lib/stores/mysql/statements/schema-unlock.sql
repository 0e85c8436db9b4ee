/*
 * Releases the schema lock schema-lock.sql took on this connection.
 * Input:
 *   ? the table name as configured
 * Output: one row (1 when released).
 */
SELECT RELEASE_LOCK(LEFT(CONCAT('nest-lock schema ', ?), 64)) AS released
