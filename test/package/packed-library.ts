/**
 * The library as a user downloads it: `npm pack` of the built checkout (the
 * tests run after `npm run build:all`, which `npm test` does first), unpacked
 * where a test can load it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A packed tarball and the paths it holds (relative to the package folder). */
export interface PackedLibrary {
  tarball: string;
  files: string[];
}

/**
 * Packs the checkout into a new temporary folder as `npm pack` does, with its
 * prepack and postpack scripts (the packed manifest loses its install-time
 * scripts), but without the build prepack runs: the build must be current
 * (`npm run build:all`).
 */
export function packLibrary(): PackedLibrary {
  if (!existsSync(join(repoRoot, 'dist/cjs/index.js')) || !existsSync(join(repoRoot, 'dist/esm/index.mjs'))) {
    throw new Error(
      'dist/cjs or dist/esm is missing: run `npm run build:all` (npm test does) before the package tests',
    );
  }
  const dest = mkdtempSync(join(tmpdir(), 'nest-lock-pack-'));
  const env: NodeJS.ProcessEnv = { ...process.env, NEST_LOCK_PACK_BUILT: '1' };
  delete env.NODE_OPTIONS;
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dest], {
    cwd: repoRoot,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [info] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(dest, info.filename), files: info.files.map((f) => f.path).sort() };
}

/**
 * Unpacks the tarball as `node_modules/nest-lock` of a new folder whose other
 * node_modules entries link to this checkout's, so the peers resolve.
 * Returns the folder (a script run there loads the packed copy by name).
 */
export function installUnpacked(tarball: string, peers: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'nest-lock-unpacked-'));
  const pkgDir = join(dir, 'node_modules/nest-lock');
  mkdirSync(pkgDir, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
  for (const peer of peers) {
    // A scoped name ('@types/node') gets its scope folder; a scope ('@nestjs') is linked whole.
    mkdirSync(dirname(join(dir, 'node_modules', peer)), { recursive: true });
    symlinkSync(join(repoRoot, 'node_modules', peer), join(dir, 'node_modules', peer), 'dir');
  }
  return dir;
}
