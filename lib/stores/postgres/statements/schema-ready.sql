/*
  Whether both tables, every column this version uses (ping.sql's read) and
  the waiters' index are in place, by a read that takes no lock a lock
  statement waits for: then no DDL runs. A missing table or column fails it.

  Input:
    none; {{qualifiedIndex}} the waiters' index, with the table's schema
  Output:
    one row: ready – true when the index is there too
*/
SELECT to_regclass('{{qualifiedIndex}}') IS NOT NULL AS ready FROM (SELECT count(*) FROM (
  SELECT l.acquired_at, l.holders, l.permits, w.mode, w.permits, w.grant_ms, w.fences FROM {{locks}} l, {{waiters}} w LIMIT 0
) x) y
