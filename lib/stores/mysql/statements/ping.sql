/*
 * A read of both tables that returns nothing: a missing table, or one without
 * a column this version uses, fails it.
 * Input: none.
 * Output: no rows.
 */
SELECT l.name, l.owner, l.fencing_token, l.expires_at, l.acquired_at, l.holders, l.permits, w.ticket, w.owner, w.expires_at, w.mode, w.permits
FROM {{locks}} l, {{waiters}} w LIMIT 0
