import { sqlSource } from './sql-source.cjs';
import { statementHeaderMessage, statementPlaceholderMessage } from '../../errors/lock.messages.js';

/**
 * A SQL statement file of a SQL store: `<store>/statements/<name>.sql`.
 *
 * The file opens with one block comment that says what the statement does,
 * its parameters (`Input:`, one line each: `$1 name` for PostgreSQL, `? name`
 * in order for MySQL) and what it returns (`Output:`), as the Redis store's Lua
 * scripts do. Table names are written `{{locks}}`, `{{waiters}}`, …: the store
 * fills them in from its configured (quoted) table names once, when it starts.
 * The header is not sent to the server.
 * @internal
 */
export interface SqlStatement {
  /** The file's name without `.sql`. */
  readonly name: string;
  /** The statement as sent, header dropped, table names still as `{{placeholders}}`. */
  readonly text: string;
  /** The placeholders the text uses, each once, in order of first use. */
  readonly placeholders: readonly string[];
}

const HEADER = /^\s*\/\*[\s\S]*?\*\/\s*/;
const PLACEHOLDER = /\{\{(\w+)\}\}/g;

/** Reads and checks `<store>/statements/<name>.sql` (it must open with its header comment). @internal */
export function sqlStatement(store: string, name: string): SqlStatement {
  const source = sqlSource(store, name);
  const header = HEADER.exec(source);
  if (!header || !/\bInput:/.test(header[0]) || !/\bOutput:/.test(header[0])) {
    throw new Error(statementHeaderMessage(store, name));
  }
  const text = source.slice(header[0].length).trim();
  const placeholders = [...new Set(Array.from(text.matchAll(PLACEHOLDER), (m) => m[1]!))];
  return { name, text, placeholders };
}

/**
 * The statement's text with each `{{placeholder}}` replaced by its value in
 * `tables` (already-quoted identifiers). Throws when one has no value: a
 * statement never reaches the server with a placeholder left in it.
 * @internal
 */
export function sqlWithTables(statement: SqlStatement, tables: Readonly<Record<string, string>>): string {
  for (const p of statement.placeholders) {
    if (tables[p] === undefined) throw new Error(statementPlaceholderMessage(statement.name, p));
  }
  return statement.text.replace(PLACEHOLDER, (_m: string, p: string) => tables[p]!);
}
