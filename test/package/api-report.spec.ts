/**
 * The public API, reviewed: API Extractor's reports of every entry point
 * (etc/*.api.md, committed) must match the declarations the package ships,
 * and those declarations must type-check on their own (the build strips
 * `@internal` declarations, so a public one that names an internal one
 * breaks). After an intended API change, `npm run api:update` rewrites the
 * reports; commit them with the change.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './packed-library.js';

describe('the API reports', () => {
  test('match the shipped declarations, which type-check (refresh with `npm run api:update`)', () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const run = spawnSync(process.execPath, ['scripts/api-report.mjs'], {
      cwd: repoRoot,
      env,
      encoding: 'utf8',
      timeout: 180_000,
    });
    expect({ status: run.status, output: run.stdout + run.stderr }).toEqual({ status: 0, output: '' });
  });

  test('cover every entry point, and show nothing marked @internal', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      name: string;
      exports: Record<string, unknown>;
    };
    const reports = readdirSync(join(repoRoot, 'etc')).filter((f) => f.endsWith('.api.md'));
    const expected = Object.keys(pkg.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) =>
        subpath === '.' ? `${pkg.name}.api.md` : `${pkg.name}-${subpath.slice(2).replaceAll('/', '-')}.api.md`,
      );
    expect(reports.sort()).toEqual(expected.sort());
    for (const report of reports) {
      expect({ report, internal: readFileSync(join(repoRoot, 'etc', report), 'utf8').includes('@internal') }).toEqual({
        report,
        internal: false,
      });
    }
  });
});
