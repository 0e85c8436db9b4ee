/*
 * Takes this table's schema lock on the connection (a named lock, released by
 * schema-unlock.sql): instances that start together create the tables one at
 * a time. Used for the creation only, never on the lock path.
 * Input:
 *   ? the table name as configured
 *   ? how long to wait for it, in seconds
 * Output: one row, ok: 1 when taken, 0 when the wait ran out, NULL on an error.
 */
SELECT GET_LOCK(LEFT(CONCAT('nest-lock schema ', ?), 64), ?) AS ok
