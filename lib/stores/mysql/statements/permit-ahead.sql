/*
 * The live waiters of a name ahead of a caller (all of them for a first
 * attempt), in line, with what each asks.
 * Input:
 *   ? name
 *   ? the caller's ticket, or NULL (a first attempt)
 *   ? the same ticket again
 * Output: rows of ticket, mode, permits, by ticket.
 */
SELECT ticket, mode, permits FROM {{waiters}}
WHERE name = ? AND expires_at > UTC_TIMESTAMP(6) AND (? IS NULL OR ticket < ?)
ORDER BY ticket
