/**
 * The PostgreSQL store's tables: the `tableName` option checked and quoted,
 * their DDL (`schemaSql`), and the statements that only touch the tables
 * (ping, LISTEN). The lock statements are in `postgres-lock.sql.ts`.
 */
import { LockOptionsError } from '../../errors/lock.errors.js';
import { optionMessage, tableNameMessage } from '../../errors/lock.messages.js';

/** Default lock table of {@link PostgresLockProvider}. */
export const DEFAULT_POSTGRES_LOCK_TABLE = 'nest_locks';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WAITERS_SUFFIX = '_waiters';
const INDEX_SUFFIX = '_waiters_name_idx';
/**
 * The identifiers of one lock table, quoted for SQL.
 * @internal
 */
export interface PostgresLockTables {
  /** As given: also the NOTIFY channel. */
  readonly raw: string;
  /** The lock table. */
  readonly locks: string;
  /** The FIFO queue of waiters, `<table>_waiters`. */
  readonly waiters: string;
  /** The waiters' index, `<table>_waiters_name_idx` (in the table's schema). */
  readonly index: string;
  /** {@link index} with the table's schema, when the name gives one. */
  readonly qualifiedIndex: string;
}

/**
 * Checks a `tableName` option (`table` or `schema.table`: letters, digits, `_`;
 * at most 63 characters) and quotes its parts.
 * @throws {LockOptionsError} for a name that is not such an identifier.
 * @internal
 */
export function postgresLockTables(tableName: unknown): PostgresLockTables {
  const where = 'PostgresLockProvider';
  if (typeof tableName !== 'string') {
    throw new LockOptionsError(optionMessage(where, 'tableName', 'a string', tableName));
  }
  const parts = tableName.split('.');
  const table = parts[parts.length - 1];
  if (parts.length > 2 || !parts.every((p) => IDENT.test(p)) || tableName.length > 63 || table.length + INDEX_SUFFIX.length > 63) {
    throw new LockOptionsError(tableNameMessage(where, tableName, 63 - INDEX_SUFFIX.length));
  }
  const quote = (p: string): string => `"${p}"`;
  const schema = parts.length === 2 ? `${quote(parts[0])}.` : '';
  return {
    raw: tableName,
    locks: schema + quote(table),
    waiters: schema + quote(table + WAITERS_SUFFIX),
    index: quote(table + INDEX_SUFFIX),
    qualifiedIndex: schema + quote(table + INDEX_SUFFIX),
  };
}

/**
 * The DDL of the lock table and the waiters' queue (idempotent: `IF NOT EXISTS`;
 * adds the columns a table created by an older version lacks).
 * @internal
 */
export function schemaSql(n: PostgresLockTables): string {
  return `CREATE TABLE IF NOT EXISTS ${n.locks} (
  name          text        PRIMARY KEY,
  owner         text,
  fencing_token bigint      NOT NULL,
  expires_at    timestamptz NOT NULL,
  acquired_at   timestamptz,
  holders       jsonb,
  permits       integer
);
ALTER TABLE ${n.locks} ADD COLUMN IF NOT EXISTS acquired_at timestamptz,
  ADD COLUMN IF NOT EXISTS holders jsonb, ADD COLUMN IF NOT EXISTS permits integer;
CREATE TABLE IF NOT EXISTS ${n.waiters} (
  ticket     bigserial   PRIMARY KEY,
  name       text        NOT NULL,
  owner      text        NOT NULL,
  expires_at timestamptz NOT NULL,
  mode       text        NOT NULL DEFAULT 'exclusive',
  permits    integer     NOT NULL DEFAULT 1,
  grant_ms   float8,
  fences     integer
);
ALTER TABLE ${n.waiters} ADD COLUMN IF NOT EXISTS mode text NOT NULL DEFAULT 'exclusive',
  ADD COLUMN IF NOT EXISTS permits integer NOT NULL DEFAULT 1, ADD COLUMN IF NOT EXISTS grant_ms float8, ADD COLUMN IF NOT EXISTS fences integer;
CREATE INDEX IF NOT EXISTS ${n.index} ON ${n.waiters} (name, ticket);
`;
}

/**
 * The SQL that creates the default tables (`nest_locks`, `nest_locks_waiters`),
 * for migrations; same as `PostgresLockProvider.schemaSql()`.
 */
export const POSTGRES_LOCK_SCHEMA_SQL: string = schemaSql(postgresLockTables(DEFAULT_POSTGRES_LOCK_TABLE));

/**
 * How long the DDL of {@link createSchemaSql} waits for a table lock before it
 * gives up (and is tried again): less than PostgreSQL's `deadlock_timeout`
 * (1 s by default), so that when its `ACCESS EXCLUSIVE` locks meet the lock
 * statements of running instances, the DDL is what gives way, not their call.
 * @internal
 */
export const SCHEMA_LOCK_TIMEOUT_MS = 200;

/**
 * {@link schemaSql} behind a transaction-level advisory lock, as one simple-protocol
 * query (one transaction): instances that start together do not race on the
 * catalog; its table locks wait at most {@link SCHEMA_LOCK_TIMEOUT_MS}.
 * @internal
 */
export const createSchemaSql = (n: PostgresLockTables): string =>
  `SELECT pg_advisory_xact_lock(hashtext('nest-lock schema ${n.raw}'));\nSET LOCAL lock_timeout = ${SCHEMA_LOCK_TIMEOUT_MS};\n${schemaSql(n)}`;

/**
 * A read of both tables that returns nothing: a missing table, or one that
 * lacks a column (created by an older version), fails it.
 * @internal
 */
export const pingSql = (n: PostgresLockTables): string =>
  `SELECT l.acquired_at, l.holders, l.permits, w.mode, w.permits, w.grant_ms, w.fences FROM ${n.locks} l, ${n.waiters} w LIMIT 0`;

/**
 * Whether both tables, every column this version uses and the waiters' index
 * are in place (`ready`), by a read that takes no lock a lock statement waits
 * for: then no DDL runs. A missing table or column fails it.
 * @internal
 */
export const schemaReadySql = (n: PostgresLockTables): string =>
  `SELECT to_regclass('${n.qualifiedIndex}') IS NOT NULL AS ready FROM (SELECT count(*) FROM (${pingSql(n)}) x) y`;

/**
 * Subscribes a connection to the table's NOTIFY channel.
 * @internal
 */
export const listenSql = (n: PostgresLockTables): string => `LISTEN "${n.raw}"`;

/**
 * A round trip that proves a connection alive.
 * @internal
 */
export const ALIVE_SQL = 'SELECT 1';
