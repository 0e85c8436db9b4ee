/*
 * Queues a waiter for a name: its ticket (the auto-increment id) orders it
 * after every earlier one. The entry has a lease of its own, renewed by the
 * waiting process (heartbeat), so a waiter whose process died holds the line
 * no longer than that.
 * Input:
 *   ? name
 *   ? owner
 *   ? lease of the queue entry, in microseconds
 *   ? mode: 'shared' or 'exclusive'
 *   ? limit (permits) asked for
 * Output: the ticket, as insert id.
 */
INSERT INTO {{waiters}} (name, owner, expires_at, mode, permits) VALUES (?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, ?, ?)
