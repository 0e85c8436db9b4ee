/*
  Deletes a batch of rows whose lease ended more than $1 ms ago, with no live
  holder (plain or in `holders`) and no live waiter queued for the name, and
  stale queue entries of any name (prune()). Only rows whose counter is behind
  the clock (in microseconds) by as much: the row that replaces one then
  starts above every token it gave, even if the clock is set back by less
  than $1 ms. Rows another statement has locked (a lock call on that name
  right now) are skipped, never waited for (SKIP LOCKED). prune-batch.sql is
  the same statement as the background pruning runs it.

  Input:
    $1 age – in ms
    $2 batch – rows at most
  Output:
    one row: n – the rows deleted
*/
WITH turn AS (
  SELECT true AS mine
), gone AS (
  DELETE FROM {{locks}} WHERE ctid = ANY(ARRAY(
    SELECT l.ctid FROM {{locks}} l WHERE (SELECT mine FROM turn) AND l.expires_at < clock_timestamp() - $1::float8 * interval '1 millisecond'
      AND l.fencing_token < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - ($1::float8 * 1000)::bigint
      AND NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8)
      AND NOT EXISTS (SELECT 1 FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())
    LIMIT $2::int FOR UPDATE OF l SKIP LOCKED))
  RETURNING 1
), stale AS (
  DELETE FROM {{waiters}} WHERE ctid = ANY(ARRAY(
    SELECT w.ctid FROM {{waiters}} w WHERE (SELECT mine FROM turn) AND w.expires_at < clock_timestamp() - interval '1 minute'
    LIMIT $2::int FOR UPDATE OF w SKIP LOCKED))
)
SELECT CASE WHEN (SELECT mine FROM turn) THEN count(*)::int END AS n FROM gone
