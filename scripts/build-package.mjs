/**
 * Builds what the package ships: the library compiled once, as CommonJS
 * (dist/cjs), and for each entry point a thin ES module (dist/esm) that
 * re-exports the CommonJS build's names. `import` and `require` then load the
 * same module, so a process has one copy of every class (DI tokens such as
 * LockProvider stay the same token, whichever way an app loads the package).
 * The names are read from the built CommonJS module, so a new export needs no
 * edit here.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Entry points of the "exports" map, relative to lib/ and to each build folder. */
const ENTRIES = [
  'index',
  'health/index',
  'dashboard/index',
  'testing/index',
  'stores/redis/index',
  'stores/postgres/index',
  'stores/mysql/index',
];

rmSync(join(root, 'dist/cjs'), { recursive: true, force: true });
rmSync(join(root, 'dist/esm'), { recursive: true, force: true });
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.cjs.json')], {
  cwd: root,
  stdio: 'inherit',
});
writeFileSync(join(root, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);

// The Redis store's Lua scripts (lib/**/*.lua) and the SQL stores' statements
// (lib/**/*.sql), read at run time relative to the module that loads them: into
// the package's build, and into dist/lib when tsc built it (`npm run build`,
// `npm run build:all`).
const luaFiles = readdirSync(join(root, 'lib'), { recursive: true }).filter(
  (f) => f.endsWith('.lua') || f.endsWith('.sql'),
);
for (const out of ['dist/cjs', 'dist/lib']) {
  if (!existsSync(join(root, out))) continue;
  for (const file of luaFiles) {
    mkdirSync(dirname(join(root, out, file)), { recursive: true });
    copyFileSync(join(root, 'lib', file), join(root, out, file));
  }
}

// Declarations that import an optional peer's types (pg, ioredis, @nestjs/terminus,
// ...) get `// @ts-ignore` on that import: an app without the peer (or its
// @types package) then reads those types as `any` instead of failing to compile
// when it does not set `skipLibCheck` (an app that never uses PostgreSQL needs
// no @types/pg). An app that has the peer gets its types as they are. tsc drops
// comments on imports from the declarations it emits, hence this step.
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const optionalPeers = Object.keys(pkg.peerDependenciesMeta ?? {}).filter(
  (name) => pkg.peerDependenciesMeta[name].optional,
);
const escaped = optionalPeers.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
const peerImport = new RegExp(`^(import\\b[^;]*?\\bfrom '(?:${escaped})(?:/[^']*)?';)$`, 'gm');
for (const file of readdirSync(join(root, 'dist/cjs'), { recursive: true }).filter((f) => /\.d\.c?ts$/.test(f))) {
  const path = join(root, 'dist/cjs', file);
  const text = readFileSync(path, 'utf8');
  const marked = text.replace(
    peerImport,
    '// @ts-ignore: an optional peer; without it (or its @types package) these types are any\n$1',
  );
  if (marked !== text) writeFileSync(path, marked);
}

const require = createRequire(import.meta.url);
for (const entry of ENTRIES) {
  const exported = Object.keys(require(join(root, 'dist/cjs', `${entry}.js`)));
  const names = exported.filter((n) => n !== '__esModule').sort();
  const up = '../'.repeat(entry.split('/').length);
  const target = `${up}cjs/${entry}.js`;
  const file = join(root, 'dist/esm', entry);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    `${file}.mjs`,
    `// The ES module entry: the CommonJS build's exports, so import and require share one copy.\n` +
      `import cjs from '${target}';\n\n` +
      `export const {\n${names.map((n) => `  ${n},\n`).join('')}} = cjs;\n`,
  );
  writeFileSync(`${file}.d.mts`, `export * from '${target}';\n`);
}
