/**
 * The MySQL store's tables: the `tableName` option checked and quoted, and
 * their DDL (`statements/schema.sql`).
 */
import { LockOptionsError } from '../../errors/lock.errors.js';
import { expected, mysqlTableNameMessage, optionMessage } from '../../errors/lock.messages.js';
import { sqlStatement, sqlWithTables } from '../sql/sql-statement.js';

/** Default lock table of {@link MysqlLockProvider}. */
export const DEFAULT_MYSQL_LOCK_TABLE = 'nest_locks';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** MySQL's identifiers take 64 characters; `_waiters` and `_name_idx` go after the table's. */
const MAX_TABLE = 56;

/**
 * The identifiers of one lock table, quoted for SQL: the `{{placeholders}}` of the statement files.
 * @internal
 */
export interface MysqlLockTables {
  /** As given. */
  readonly raw: string;
  /** Placeholder values: `locks`, `waiters`, `waitersIndex`. */
  readonly names: Readonly<Record<string, string>>;
}

/**
 * Checks a `tableName` option (`table` or `database.table`) and quotes its parts.
 * @throws {LockOptionsError} for a name that is not such an identifier.
 * @internal
 */
export function mysqlLockTables(tableName: unknown): MysqlLockTables {
  const where = 'MysqlLockProvider';
  if (typeof tableName !== 'string')
    throw new LockOptionsError(optionMessage(where, 'tableName', expected.string, tableName));
  const parts = tableName.split('.');
  const table = parts[parts.length - 1];
  if (parts.length > 2 || !parts.every((p) => IDENT.test(p) && p.length <= 64) || table.length > MAX_TABLE) {
    throw new LockOptionsError(mysqlTableNameMessage(where, tableName));
  }
  const schema = parts.length === 2 ? `\`${parts[0]}\`.` : '';
  return {
    raw: tableName,
    names: {
      locks: `${schema}\`${table}\``,
      waiters: `${schema}\`${table}_waiters\``,
      waitersIndex: `\`${table}_name_idx\``,
    },
  };
}

/**
 * The DDL of the two tables, as separate statements (idempotent: `IF NOT EXISTS`).
 * @internal
 */
export function schemaStatements(tables: MysqlLockTables): string[] {
  return sqlWithTables(sqlStatement('mysql', 'schema'), tables.names)
    .split(/\n;\n/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * The DDL as one script, statements ended by `;`, for a migration.
 * @internal
 */
export function schemaSql(tables: MysqlLockTables): string {
  return `${schemaStatements(tables).join(';\n\n')};\n`;
}

/**
 * The lock statements of one table, by file name, with the table names filled in.
 * @internal
 */
export function mysqlLockStatements(tables: MysqlLockTables) {
  const load = (name: string): string => sqlWithTables(sqlStatement('mysql', name), tables.names);
  return {
    acquire: load('acquire'),
    acquireNew: load('acquire-new'),
    permitNew: load('permit-new'),
    permitRow: load('permit-row'),
    permitAhead: load('permit-ahead'),
    permitWrite: load('permit-write'),
    state: load('state'),
    enqueue: load('enqueue'),
    dequeue: load('dequeue'),
    pruneWaiters: load('prune-waiters'),
    heartbeat: load('heartbeat'),
    watch: load('watch'),
    release: load('release'),
    releasePass: load('release-pass'),
    extend: load('extend'),
    extendMany: load('extend-many'),
    holder: load('holder'),
    inspect: load('inspect'),
    ping: load('ping'),
    prune: load('prune'),
    schemaLock: load('schema-lock'),
    schemaUnlock: load('schema-unlock'),
  };
}

/** @internal */
export type MysqlLockStatements = ReturnType<typeof mysqlLockStatements>;
