/**
 * The PostgreSQL store's statements: one file each in `statements/`, whose
 * header says what it does, its parameters and its answer, with the table
 * names filled in.
 */
import { sqlStatement, sqlWithTables } from '../sql/sql-statement.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';

/**
 * The text of `statements/<name>.sql` for these tables: `{{locks}}`,
 * `{{waiters}}`, `{{index}}` and `{{qualifiedIndex}}` (quoted identifiers),
 * `{{table}}` (the name as configured, checked: inside the literal of an
 * advisory lock's key) and `{{channel}}` (that name quoted, for `LISTEN`);
 * `values` fills a statement's others (checked numbers of the settings).
 * @throws {Error} when the file is missing, has no header, or uses a placeholder without a value.
 * @internal
 */
export function postgresSql(
  name: string,
  tables: PostgresLockTables,
  values: Readonly<Record<string, string>> = {},
): string {
  const names = {
    locks: tables.locks,
    waiters: tables.waiters,
    index: tables.index,
    qualifiedIndex: tables.qualifiedIndex,
    table: tables.raw,
    channel: `"${tables.raw}"`,
  };
  return sqlWithTables(sqlStatement('postgres', name), { ...names, ...values });
}

/** The lock statements by operation (the names of their prepared statements), and their files. */
const FILES = {
  acquire: 'acquire',
  acquirePermit: 'acquire-permit',
  extend: 'extend',
  extendPermit: 'extend-permit',
  release: 'release',
  releaseQueue: 'release-queue',
  releasePermit: 'release-permit',
  dequeue: 'dequeue',
  inspect: 'inspect',
  prune: 'prune',
  holder: 'holder',
  heartbeat: 'heartbeat',
  extendMany: 'extend-many',
  extendPermitMany: 'extend-permit-many',
} as const;

/**
 * The lock statements of one table, by operation: the statements the
 * provider runs as named prepared statements (unless `prepareStatements:
 * false`).
 * @internal
 */
export type PostgresLockStatements = { readonly [operation in keyof typeof FILES]: string };

/**
 * The lock statements of one table, read and filled in once, when the provider is built.
 * @internal
 */
export function postgresLockStatements(tables: PostgresLockTables): PostgresLockStatements {
  return Object.fromEntries(
    Object.entries(FILES).map(([operation, file]) => [operation, postgresSql(file, tables)]),
  ) as PostgresLockStatements;
}
