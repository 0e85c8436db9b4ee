import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The text of the SQL statement file `<store>/statements/<name>.sql` of the
 * stores folder (`postgres`, `mysql`), as written. Read relative to this file's
 * folder: a CommonJS file in every build (`__dirname` under Jest, in `dist/lib`
 * and in the packed `dist/cjs`, where the build copies the `.sql` files with
 * the same relative paths).
 * @internal
 */
export function sqlSource(store: string, name: string): string {
  return readFileSync(join(__dirname, '..', store, 'statements', `${name}.sql`), 'utf8');
}
