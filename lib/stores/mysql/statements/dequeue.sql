/*
 * Removes a waiter's queue entry (granted, timed out, aborted or closed).
 * Input:
 *   ? ticket
 * Output: affected rows 1 when it was there.
 */
DELETE FROM {{waiters}} WHERE ticket = ?
