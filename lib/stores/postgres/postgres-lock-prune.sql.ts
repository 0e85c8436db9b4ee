/**
 * The prune statements of the PostgreSQL store: the rows of lock names unused
 * for long, deleted in batches, by `prune()` and by the provider's own
 * background pruning (`postgres-lock-pruner.ts`).
 */
import type { PostgresLockTables } from './postgres-lock-schema.sql.js';
import { LIVE, MS, NOW_US } from './postgres-lock-fragments.sql.js';

/**
 * Deletes a batch (`batch` rows at most) of rows whose lease ended more than
 * `age` ms ago, with no live holder (plain or in `holders`) and no live
 * waiter queued for the name, and stale queue entries of any name; answers
 * `n`, the rows deleted. Only rows whose counter is behind the clock (in
 * microseconds) by as much: the row that replaces one then starts above every
 * token it gave, even if the clock is set back by less than `age` ms. Rows
 * another statement has locked (a lock call on that name right now) are
 * skipped, never waited for (`SKIP LOCKED`). `turn`, when given, is a
 * condition evaluated once before anything is read: when false, the statement
 * deletes nothing and answers `n` NULL.
 * Parameters by default: $1 age ms, $2 batch.
 * @internal
 */
export const pruneSql = (n: PostgresLockTables, age = '$1::float8', batch = '$2::int', turn = 'true'): string => `WITH turn AS (
  SELECT ${turn} AS mine
), gone AS (
  DELETE FROM ${n.locks} WHERE ctid = ANY(ARRAY(
    SELECT l.ctid FROM ${n.locks} l WHERE (SELECT mine FROM turn) AND l.expires_at < clock_timestamp() - ${age} ${MS}
      AND l.fencing_token < ${NOW_US} - (${age} * 1000)::bigint
      AND NOT EXISTS (SELECT 1 FROM ${LIVE})
      AND NOT EXISTS (SELECT 1 FROM ${n.waiters} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())
    LIMIT ${batch} FOR UPDATE OF l SKIP LOCKED))
  RETURNING 1
), stale AS (
  DELETE FROM ${n.waiters} WHERE ctid = ANY(ARRAY(
    SELECT w.ctid FROM ${n.waiters} w WHERE (SELECT mine FROM turn) AND w.expires_at < clock_timestamp() - interval '1 minute'
    LIMIT ${batch} FOR UPDATE OF w SKIP LOCKED))
)
SELECT CASE WHEN (SELECT mine FROM turn) THEN count(*)::int END AS n FROM gone`;

/**
 * The advisory lock key of a table's background pruning: one instance at a
 * time prunes a table, the others skip their turn.
 */
const pruneTurn = (n: PostgresLockTables): string => `pg_try_advisory_xact_lock(hashtext('nest-lock prune ${n.raw}'))`;

/**
 * One batch of the background pruning, as one simple-protocol query (one
 * transaction): a `statement_timeout` of `timeoutMs` for this batch only,
 * then {@link pruneSql} of `batch` rows older than `olderThanMs`, on the
 * condition that this transaction gets the table's pruning advisory lock
 * without waiting (`pg_try_advisory_xact_lock`, released at commit); else it
 * answers `n` NULL: another instance is pruning. The numbers are checked
 * options, written into the text (a simple-protocol query takes no parameters).
 * @internal
 */
export function pruneBatchSql(n: PostgresLockTables, olderThanMs: number, batch: number, timeoutMs: number): string {
  const int = (v: number): string => String(Math.max(1, Math.floor(v)));
  return `SET LOCAL statement_timeout = ${int(timeoutMs)};\n${pruneSql(n, `${int(olderThanMs)}::float8`, int(batch), pruneTurn(n))}`;
}
