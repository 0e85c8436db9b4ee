/**
 * The manifest the tarball ships has no install-time script. The repository
 * keeps `prepare` (it builds dist/ on `npm install` of a clone, and npm runs it
 * when an app installs the package from git), but an app installing the
 * tarball from the registry must not see one: npm 11 warns about it, and it
 * would try to run scripts/, which the tarball does not hold.
 *
 *   node scripts/packed-manifest.mjs prepack   (npm's prepack) builds the package (scripts/build-package.mjs),
 *                                              then writes package.json without install-time scripts,
 *                                              keeping the original in dist/
 *   node scripts/packed-manifest.mjs postpack  (npm's postpack) puts the original back
 *
 * `NEST_LOCK_PACK_BUILT=1` skips the build, for tests that pack a build they
 * have just checked is current (test/package/packed-library.ts).
 *
 * npm packs the package.json on disk between the two, so `npm pack` and
 * `npm publish` both ship the stripped one. If a pack fails between them,
 * the next `prepack` or `postpack` puts the original back first.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = join(root, 'package.json');
const kept = join(root, 'dist/package.json.before-pack');
/** The scripts npm runs when the package is installed as a dependency. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

function restore() {
  if (existsSync(kept)) renameSync(kept, manifest);
}

const command = process.argv[2];
if (command === 'prepack') {
  restore();
  if (process.env.NEST_LOCK_PACK_BUILT !== '1')
    execFileSync(process.execPath, [join(root, 'scripts/build-package.mjs')], { cwd: root, stdio: 'inherit' });
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  for (const name of INSTALL_SCRIPTS) delete pkg.scripts?.[name];
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (command === 'postpack') {
  restore();
} else {
  console.error('usage: node scripts/packed-manifest.mjs prepack|postpack');
  process.exit(1);
}
