/**
 * `npm install git+<url>#<commit>`, as an app installs the package before it
 * is published (the README's Install section): npm clones the repository,
 * installs its dev dependencies, runs its `prepare` (the build), and packs
 * it. This test installs the checkout's HEAD commit (what is committed, not
 * the working tree) into an empty app and loads it both ways. Slow: npm
 * installs the repository's dev dependencies in the clone (from its cache
 * when it can).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './packed-library.js';

let app: string;
afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

test('an app installs the package from git: the build runs, and require and import load it', () => {
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  app = mkdtempSync(join(tmpdir(), 'nest-lock-git-app-'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const install = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', `git+file://${repoRoot}#${commit}`],
    {
      cwd: app,
      env,
      encoding: 'utf8',
      timeout: 900_000,
    },
  );
  if (install.status !== 0)
    throw new Error(`npm install from git failed (exit ${install.status}):\n${install.stdout}\n${install.stderr}`);

  const installed = join(app, 'node_modules/nest-lock');
  expect(existsSync(join(installed, 'dist/cjs/index.js'))).toBe(true);
  expect(existsSync(join(installed, 'dist/esm/index.mjs'))).toBe(true);
  const load = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import { createRequire } from 'node:module'; const esm = await import('nest-lock'); const cjs = createRequire(process.cwd() + '/')('nest-lock'); console.log(typeof esm.LockModule, esm.LockModule === cjs.LockModule)",
    ],
    { cwd: app, env, encoding: 'utf8', timeout: 60_000 },
  );
  expect(load.stderr).toBe('');
  expect(load.stdout.trim()).toBe('function true');
}, 960_000);
