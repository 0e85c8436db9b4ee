/**
 * SQL fragments shared by the lock statements of the PostgreSQL store
 * (`postgres-lock.sql.ts`, `postgres-lock-release.sql.ts`).
 * @internal
 */

/** `$n` ms as an interval. */
export const MS = `* interval '1 millisecond'`;

/*
 * A lock row holds either one plain holder (exclusive, limit 1) in `owner`,
 * `expires_at` and `acquired_at`, or several holders (shared, or a semaphore's
 * permits) in `holders`: a JSON array of {o: owner, t: fencing token, e: lease
 * end, s: grant time (epoch ms, database clock), m: mode}, with the semaphore's
 * limit in `permits` and `expires_at` at or after every entry's lease end (for
 * prune). Every grant is decided on the row itself, under its row lock, so two
 * statements never both take the last permit.
 */
export const NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::float8`;
export const NOW_US = `(extract(epoch FROM clock_timestamp()) * 1000000)::bigint`;
/** The live entries `h` of lock row `l` (a `FROM ... WHERE` fragment). */
export const LIVE = `jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h WHERE (h->>'e')::float8 > ${NOW_MS}`;
/** Lock row `l` has a live plain holder. */
export const PLAIN_HELD = `l.owner IS NOT NULL AND l.expires_at > clock_timestamp()`;
/** A NOTIFY payload's `<ticket>,<ms>` of waiter row `w`. */
export const NEXT = `w.ticket::text || ',' || ceil(extract(epoch FROM w.expires_at - clock_timestamp()) * 1000)::bigint`;
/** Lock row `l` of name $1 has an entry (live or not) of owner $2 in `holders`. */
export const ENTRY_OF = `l.name = $1 AND l.holders @> jsonb_build_array(jsonb_build_object('o', $2::text))`;
