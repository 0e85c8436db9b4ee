/**
 * The pages users read speak of the library, not of how it was made: no
 * README, CHANGELOG, CONTRIBUTING, SECURITY or docs/*.md line names the
 * project's internal tracker or its work sessions. Only these forms are
 * matched: a database session, an inspector session or PostgreSQL's
 * session settings are the library's own subject and stay.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INTERNAL = /\bissue \d+|\bsession \d+|this session|the session's|\btracker\b|\bagents?\b|\bhelper session/i;

const pages = [
  'README.md',
  'CHANGELOG.md',
  'CONTRIBUTING.md',
  'SECURITY.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

test.each(pages)('%s does not speak of the internal tracker or work sessions', (page) => {
  const found = readFileSync(join(root, page), 'utf8')
    .split('\n')
    .flatMap((line, i) => (INTERNAL.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : []));
  expect(found).toEqual([]);
});
