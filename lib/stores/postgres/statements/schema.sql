/*
  The lock table and the waiters' queue, with the waiters' index: idempotent
  (IF NOT EXISTS), and it adds the columns a table created by an older
  version lacks. PostgresLockProvider.schemaSql() and POSTGRES_LOCK_SCHEMA_SQL
  give this text (for migrations); schema-lock.sql goes before it when the
  store creates the tables itself.

  Input:
    none
  Output:
    none
*/
CREATE TABLE IF NOT EXISTS {{locks}} (
  name          text        PRIMARY KEY,
  owner         text,
  fencing_token bigint      NOT NULL,
  expires_at    timestamptz NOT NULL,
  acquired_at   timestamptz,
  holders       jsonb,
  permits       integer
);
ALTER TABLE {{locks}} ADD COLUMN IF NOT EXISTS acquired_at timestamptz,
  ADD COLUMN IF NOT EXISTS holders jsonb, ADD COLUMN IF NOT EXISTS permits integer;
CREATE TABLE IF NOT EXISTS {{waiters}} (
  ticket     bigserial   PRIMARY KEY,
  name       text        NOT NULL,
  owner      text        NOT NULL,
  expires_at timestamptz NOT NULL,
  mode       text        NOT NULL DEFAULT 'exclusive',
  permits    integer     NOT NULL DEFAULT 1,
  grant_ms   float8,
  fences     integer
);
ALTER TABLE {{waiters}} ADD COLUMN IF NOT EXISTS mode text NOT NULL DEFAULT 'exclusive',
  ADD COLUMN IF NOT EXISTS permits integer NOT NULL DEFAULT 1, ADD COLUMN IF NOT EXISTS grant_ms float8, ADD COLUMN IF NOT EXISTS fences integer;
CREATE INDEX IF NOT EXISTS {{index}} ON {{waiters}} (name, ticket);
