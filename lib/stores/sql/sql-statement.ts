import { sqlSource } from './sql-source.cjs';
import {
  statementHeaderMessage,
  statementParametersMessage,
  statementPlaceholderMessage,
} from '../../errors/lock.messages.js';

/**
 * A SQL statement file of a SQL store: `<store>/statements/<name>.sql`.
 *
 * The file opens with one block comment that says what the statement does,
 * its parameters (`Input:`, one line each: `$1 name` for PostgreSQL, `? name`
 * in order for MySQL) and what it returns (`Output:`), as the Redis store's Lua
 * scripts do. Table names are written `{{locks}}`, `{{waiters}}`, …: the store
 * fills them in from its configured (quoted) table names once, when it starts
 * (as it does the checked settings a statement sent without parameters writes
 * into its text, such as a batch size). The header is not sent to the server.
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
/** A PostgreSQL parameter: `$1`, `$2`, … */
const PARAMETER = /\$(\d+)/g;

/** The files read so far, by `<store>/<name>` (a file is read once per process). */
const read = new Map<string, SqlStatement>();

/** Reads and checks `<store>/statements/<name>.sql` (it must open with its header comment). @internal */
export function sqlStatement(store: string, name: string): SqlStatement {
  const id = `${store}/statements/${name}`;
  let statement = read.get(id);
  if (!statement) {
    statement = parseSqlStatement(id, sqlSource(store, name));
    read.set(id, statement);
  }
  return statement;
}

/**
 * Checks and splits the text of a statement file named `file` (for messages):
 * its header must have `Input:` and `Output:` sections, and name every `$n`
 * the statement uses on a line of its own (`$1 name – …`).
 * @throws {Error} for a file that does not.
 * @internal
 */
export function parseSqlStatement(file: string, source: string): SqlStatement {
  const header = HEADER.exec(source);
  if (!header || !/\bInput:/.test(header[0]) || !/\bOutput:/.test(header[0])) {
    throw new Error(statementHeaderMessage(file));
  }
  const text = source.slice(header[0].length).trim();
  const undocumented = [...new Set(Array.from(text.matchAll(PARAMETER), (m) => m[0]))].filter(
    (p) => !new RegExp(`^\\s*\\${p}\\s`, 'm').test(header[0]),
  );
  if (undocumented.length > 0) throw new Error(statementParametersMessage(file, undocumented));
  const placeholders = [...new Set(Array.from(text.matchAll(PLACEHOLDER), (m) => m[1]!))];
  return { name: file.slice(file.lastIndexOf('/') + 1), text, placeholders };
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
