/*
  One batch of the background pruning, as one simple-protocol query (one
  transaction): a statement timeout for this batch only, then prune.sql's
  statement, on the condition that this transaction gets the table's pruning
  advisory lock without waiting (pg_try_advisory_xact_lock, released at
  commit): one instance at a time prunes a table, the others skip their turn.
  A simple-protocol query takes no parameters: the store writes its checked
  settings (whole numbers) into the text when it starts.

  Input:
    none; {{olderThanMs}} the age in ms, {{batch}} rows at most,
    {{timeoutMs}} the statement timeout in ms, {{table}} the table name as
    configured (the advisory lock's key)
  Output:
    one row: n – the rows deleted, or NULL when another instance is pruning
*/
SET LOCAL statement_timeout = {{timeoutMs}};
WITH turn AS (
  SELECT pg_try_advisory_xact_lock(hashtext('nest-lock prune {{table}}')) AS mine
), gone AS (
  DELETE FROM {{locks}} WHERE ctid = ANY(ARRAY(
    SELECT l.ctid FROM {{locks}} l WHERE (SELECT mine FROM turn) AND l.expires_at < clock_timestamp() - {{olderThanMs}}::float8 * interval '1 millisecond'
      AND l.fencing_token < (extract(epoch FROM clock_timestamp()) * 1000000)::bigint - ({{olderThanMs}}::float8 * 1000)::bigint
      AND NOT EXISTS (
        SELECT 1 FROM jsonb_array_elements(coalesce(l.holders, '[]'::jsonb)) h
        WHERE (h->>'e')::float8 > (extract(epoch FROM clock_timestamp()) * 1000)::float8)
      AND NOT EXISTS (SELECT 1 FROM {{waiters}} w WHERE w.name = l.name AND w.expires_at > clock_timestamp())
    LIMIT {{batch}} FOR UPDATE OF l SKIP LOCKED))
  RETURNING 1
), stale AS (
  DELETE FROM {{waiters}} WHERE ctid = ANY(ARRAY(
    SELECT w.ctid FROM {{waiters}} w WHERE (SELECT mine FROM turn) AND w.expires_at < clock_timestamp() - interval '1 minute'
    LIMIT {{batch}} FOR UPDATE OF w SKIP LOCKED))
)
SELECT CASE WHEN (SELECT mine FROM turn) THEN count(*)::int END AS n FROM gone
