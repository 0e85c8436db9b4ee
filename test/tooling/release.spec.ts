/**
 * `npm run release -- <bump>` (scripts/release.mjs), run on copies of
 * package.json, package-lock.json and CHANGELOG.md in a temporary folder.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'nest-lock-release-'));
  for (const file of ['package.json', 'package-lock.json', 'CHANGELOG.md'])
    copyFileSync(join(root, file), join(dir, file));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function release(...args: string[]): { status: number | null; output: string } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const run = spawnSync(process.execPath, [join(root, 'scripts/release.mjs'), ...args], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

const read = (file: string) => readFileSync(join(dir, file), 'utf8');
const versions = () => ({
  pkg: (JSON.parse(read('package.json')) as { version: string }).version,
  lock: (JSON.parse(read('package-lock.json')) as { version: string }).version,
  lockRoot: (JSON.parse(read('package-lock.json')) as { packages: Record<string, { version: string }> }).packages['']
    .version,
});

describe('npm run release', () => {
  test('refuses a release with nothing under Unreleased, and changes nothing', () => {
    const before = read('CHANGELOG.md').replace(/## \[Unreleased\]\n[\s\S]*?(?=\n## \[)/, '## [Unreleased]\n');
    writeFileSync(join(dir, 'CHANGELOG.md'), before);
    const run = release('minor');
    expect(run.status).toBe(1);
    expect(run.output).toMatch(/nothing is listed under "## \[Unreleased\]"/);
    expect(read('CHANGELOG.md')).toBe(before);
    expect(versions().pkg).toBe(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });

  test('minor: the Unreleased notes become the new version entry, dated, with its compare link; package.json and the lockfile get the version', () => {
    const current = versions().pkg;
    const [major, minor] = current.split('.').map(Number);
    const next = `${major}.${minor + 1}.0`;
    const changelog = read('CHANGELOG.md').replace(
      '## [Unreleased]\n',
      '## [Unreleased]\n\n### Fixed\n\n- A release note.\n',
    );
    writeFileSync(join(dir, 'CHANGELOG.md'), changelog);

    const run = release('minor');
    expect(run).toMatchObject({ status: 0 });
    expect(run.output).toContain(`${current} -> ${next}`);
    expect(versions()).toEqual({ pkg: next, lock: next, lockRoot: next });

    const after = read('CHANGELOG.md');
    const unreleased = after.indexOf('## [Unreleased]');
    const entry = after.indexOf(`## [${next}] - ${new Date().toISOString().slice(0, 10)}`);
    const previous = after.indexOf(`## [${current}]`);
    expect(unreleased).toBeGreaterThan(-1);
    expect(entry).toBeGreaterThan(unreleased);
    expect(previous).toBeGreaterThan(entry);
    // Unreleased is empty again; the note sits under the new version.
    expect(after.slice(unreleased, entry).trim()).toBe('## [Unreleased]');
    expect(after.slice(entry, previous)).toContain('### Fixed\n\n- A release note.');
    expect(after).toMatch(new RegExp(`^\\[Unreleased\\]: \\S+/compare/v${next}\\.\\.\\.HEAD$`, 'm'));
    expect(after).toMatch(new RegExp(`^\\[${next}\\]: \\S+/compare/v${current}\\.\\.\\.v${next}$`, 'm'));

    // The next one is refused until something is listed again.
    expect(release('patch').status).toBe(1);
  });

  test('an explicit version, and a wrong argument', () => {
    writeFileSync(
      join(dir, 'CHANGELOG.md'),
      read('CHANGELOG.md').replace('## [Unreleased]\n', '## [Unreleased]\n\n### Added\n\n- Something.\n'),
    );
    expect(release('nine').status).toBe(1);
    expect(release('3.0.0-rc.1')).toMatchObject({ status: 0 });
    expect(versions()).toEqual({ pkg: '3.0.0-rc.1', lock: '3.0.0-rc.1', lockRoot: '3.0.0-rc.1' });
  });
});
