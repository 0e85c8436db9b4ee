/**
 * Where things are: the repository root, and the compiled (`dist/`) form of a
 * test file that a spec runs in a child process. The same whether this file
 * runs from its source (Jest) or compiled.
 */
import { existsSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, ending in a path separator. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url)).replace(/[\\/]dist[\\/]?$/, sep);

/**
 * The compiled `dist/…/<name>.js` of a test file, given its source URL
 * relative to the caller: `compiledScript(new URL('./fixtures/worker.js', import.meta.url))`.
 * Fails with a hint when it was not built (`npm test` builds it).
 */
export function compiledScript(source: URL): string {
  const inRepo = relative(repoRoot, fileURLToPath(source)).replace(/\.ts$/, '.js');
  const script = inRepo.startsWith(`dist${sep}`) ? join(repoRoot, inRepo) : join(repoRoot, 'dist', inRepo);
  if (!existsSync(script)) throw new Error(`${script} is missing: run "npm run build:all" (npm test does) first`);
  return script;
}
