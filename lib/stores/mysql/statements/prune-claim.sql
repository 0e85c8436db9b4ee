/*
 * Takes the table's pruning turn on this connection without waiting: a named
 * lock (GET_LOCK, session level, released by prune-unclaim.sql or when the
 * connection ends), so one instance at a time runs the background pruning of
 * a table. Its name is the table's, with the connection's database when the
 * table name has none, hashed to fit GET_LOCK's 64 characters.
 * Never used on the lock path.
 * Input:
 *   ? the table name as configured
 *   ? the table name as configured
 * Output: one row: ok – 1 when taken, 0 when another session has it, NULL on
 *   an error; n – the lock's name (for prune-unclaim.sql).
 */
SELECT GET_LOCK(n, 0) AS ok, n
FROM (SELECT CONCAT('nest-lock prune ', MD5(CONCAT_WS('.', IF(LOCATE('.', ?) > 0, NULL, DATABASE()), ?))) AS n) AS turn
