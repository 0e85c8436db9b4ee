/*
  A read of both tables that returns nothing: a missing table, or one that
  lacks a column (created by an older version), fails it.

  Input:
    none
  Output:
    no row
*/
SELECT l.acquired_at, l.holders, l.permits, w.mode, w.permits, w.grant_ms, w.fences FROM {{locks}} l, {{waiters}} w LIMIT 0
