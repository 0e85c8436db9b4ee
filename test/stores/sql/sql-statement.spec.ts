/**
 * The SQL stores' statement loader: a file's header is checked and dropped,
 * and its `{{placeholders}}` are filled or refused.
 */
import { parseSqlStatement, sqlStatement, sqlWithTables } from '../../../lib/stores/sql/sql-statement.js';

const HEADER = `/*
  Takes a row.

  Input:
    $1 name – the lock's name
    $2 owner – its owner
  Output:
    one row
*/
`;

test('the header is dropped, and the placeholders are listed once each, in order of first use', () => {
  const statement = parseSqlStatement(
    'x/statements/take',
    `${HEADER}SELECT * FROM {{locks}} l JOIN {{waiters}} w ON w.name = l.name\nWHERE l.name = $1 AND l.owner = $2 AND {{locks}}.x\n`,
  );
  expect(statement).toEqual({
    name: 'take',
    text: 'SELECT * FROM {{locks}} l JOIN {{waiters}} w ON w.name = l.name\nWHERE l.name = $1 AND l.owner = $2 AND {{locks}}.x',
    placeholders: ['locks', 'waiters'],
  });
});

test('each placeholder is replaced by its value, every time it stands', () => {
  const statement = parseSqlStatement(
    'x/statements/take',
    `${HEADER}SELECT {{a}} FROM {{locks}}, {{locks}} WHERE $1 = $2`,
  );
  expect(sqlWithTables(statement, { locks: '"s"."t"', a: '1', unused: 'x' })).toBe(
    'SELECT 1 FROM "s"."t", "s"."t" WHERE $1 = $2',
  );
});

test('a placeholder without a value is an error, never sent', () => {
  const statement = parseSqlStatement('x/statements/take', `${HEADER}SELECT * FROM {{locks}} JOIN {{waiters}}`);
  expect(() => sqlWithTables(statement, { locks: '"t"' })).toThrow(
    'take.sql uses {{waiters}}, which the store does not define',
  );
});

test('a file without its header, or whose header lacks Input: or Output:, is refused', () => {
  const refused = 'x/statements/take.sql must open with a /* ... */ header that has Input: and Output: sections';
  expect(() => parseSqlStatement('x/statements/take', 'SELECT 1')).toThrow(refused);
  expect(() => parseSqlStatement('x/statements/take', 'SELECT 1 /* Input: Output: */')).toThrow(refused);
  expect(() => parseSqlStatement('x/statements/take', '/* Takes a row. Output: one row */\nSELECT 1')).toThrow(refused);
  expect(() => parseSqlStatement('x/statements/take', '/* Takes a row. Input: none */\nSELECT 1')).toThrow(refused);
  expect(parseSqlStatement('x/statements/take', '/* Takes a row. Input: none Output: one row */\nSELECT 1').text).toBe(
    'SELECT 1',
  );
});

test('a parameter the header does not name on a line of its own is refused', () => {
  expect(() => parseSqlStatement('x/statements/take', `${HEADER}SELECT $1, $2, $3, $10`)).toThrow(
    'x/statements/take.sql uses $3, $10, which its Input: section does not name',
  );
});

test('a store statement file is read from its store folder, once', () => {
  const alive = sqlStatement('postgres', 'alive');
  expect(alive).toEqual({ name: 'alive', text: 'SELECT 1', placeholders: [] });
  expect(sqlStatement('postgres', 'alive')).toBe(alive);
  expect(() => sqlStatement('postgres', 'no-such-statement')).toThrow(/ENOENT/);
});
