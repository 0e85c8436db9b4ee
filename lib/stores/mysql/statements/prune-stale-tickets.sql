/*
 * Reads (a consistent read: no row locks) a batch of the queue entries whose
 * lease ended over a minute ago (their processes died; a live waiter renews
 * its entry well before), for prune-stale-waiters.sql.
 * Input:
 *   ? how many entries at most, as a string (an integer for LIMIT)
 * Output: rows of ticket.
 */
SELECT ticket FROM {{waiters}} WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE ORDER BY ticket LIMIT ?
