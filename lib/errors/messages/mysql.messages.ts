/** The MySQL / MariaDB store's texts: what a `mysql2` error means, and what to do about the lock tables. @internal */

/** What a `mysql2` error means, in a few words, naming the server but never a password. */
export function mysqlCause(at: string, database: string | undefined, err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const text = err instanceof Error ? err.message || err.name : String(err);
  if (code === 'ECONNREFUSED')
    return `MySQL at ${at} refused the connection (ECONNREFUSED): is MySQL or MariaDB running there, and are host and port right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `the host name of MySQL at ${at} was not found (${code}): check the host in the connection options`;
  if (code === 'ETIMEDOUT')
    return `MySQL at ${at} did not accept the connection in time (ETIMEDOUT): check the network path and firewall`;
  if (code === 'ER_ACCESS_DENIED_ERROR')
    return `MySQL at ${at} rejected the credentials (${text}): check user and password`;
  if (code === 'ER_BAD_DB_ERROR')
    return `MySQL at ${at} has no database${database === undefined ? '' : ` "${database}"`} (ER_BAD_DB_ERROR): create it or fix the database name`;
  if (code === 'ER_NO_DB_ERROR')
    return `MySQL at ${at}: the connection names no database (ER_NO_DB_ERROR): add one to the URL (/database) or the options`;
  if (code === 'ER_TABLEACCESS_DENIED_ERROR' || code === 'ER_DBACCESS_DENIED_ERROR')
    return `MySQL at ${at} denied a permission the lock store needs (${text})`;
  if (code === 'PROTOCOL_CONNECTION_LOST' || code === 'ECONNRESET' || code === 'EPIPE')
    return `MySQL at ${at} closed the connection (${String(code)})`;
  return `MySQL at ${at} failed (${typeof code === 'string' ? `${code}: ${text}` : text})`;
}

/** Added to a cause when the lock tables are missing and the store may not create them. */
export const mysqlLockTableMissingHint = (tableName: string): string =>
  ` (create the lock tables with MysqlLockProvider.schemaSql(${JSON.stringify(tableName)}) in a migration, or set createTable: true)`;

export const mysqlTableNameMessage = (where: string, value: string): string =>
  `${where}: tableName must be an identifier or database.identifier (letters, digits, _; not starting with a digit; ` +
  `the table part at most 56 characters), got ${JSON.stringify(value)}.`;

export const mysqlKeyTooLongMessage = (key: string, bytes: number, max: number): string =>
  `MysqlLockProvider: the lock key "${key.slice(0, 40)}..." is ${bytes} bytes long; MySQL locks take keys of at most ${max} bytes. ` +
  'Use a shorter lock name (e.g. a hash of the long part).';

/** A pool that has `getConnection` but no `execute`: the `mysql` package's. */
export const mysqlPoolWithoutExecute = 'a pool without execute()';

export const mysqlConnectionMessage = (where: string, got: string): string =>
  `${where}: mysql must be a mysql:// URL, mysql2 pool options (an object) or a mysql2 Pool (from mysql2 or mysql2/promise), got ${got}. ` +
  'A pool of the "mysql" package (mysqljs) has no prepared statements: use mysql2.';
