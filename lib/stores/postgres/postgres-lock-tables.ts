/**
 * The PostgreSQL store's table names: the `tableName` option checked, and
 * the identifiers its statements use, quoted.
 */
import { LockOptionsError } from '../../errors/lock.errors.js';
import { expected, optionMessage, tableNameMessage } from '../../errors/lock.messages.js';

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
    throw new LockOptionsError(optionMessage(where, 'tableName', expected.string, tableName));
  }
  const parts = tableName.split('.');
  const table = parts[parts.length - 1];
  if (
    parts.length > 2 ||
    !parts.every((p) => IDENT.test(p)) ||
    tableName.length > 63 ||
    table.length + INDEX_SUFFIX.length > 63
  ) {
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
