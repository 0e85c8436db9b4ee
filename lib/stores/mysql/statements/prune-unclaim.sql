/*
 * Gives the table's pruning turn back (the named lock prune-claim.sql took on
 * this connection).
 * Input:
 *   ? the lock's name, as prune-claim.sql answered it
 * Output: one row: ok – 1 when released.
 */
SELECT RELEASE_LOCK(?) AS ok
