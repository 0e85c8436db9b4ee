/*
  Goes before schema.sql when the store creates its tables, in the same
  transaction: a transaction-level advisory lock, so that instances that start
  together do not race on the catalog, and a short lock_timeout, so that when
  the DDL's ACCESS EXCLUSIVE locks meet the lock statements of running
  instances, the DDL gives way (and is tried again), not their call.

  Input:
    none; {{table}} the table name as configured (the advisory lock's key),
    {{lockTimeoutMs}} how long the DDL waits for a table lock, in ms
  Output:
    none
*/
SELECT pg_advisory_xact_lock(hashtext('nest-lock schema {{table}}'));
SET LOCAL lock_timeout = {{lockTimeoutMs}};
