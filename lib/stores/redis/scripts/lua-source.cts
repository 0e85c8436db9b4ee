import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An include line: `--- @include "<name>"`, alone on its line, stands for the
 * text of `includes/<name>.lua` (whose own includes are expanded too). It is
 * textual: a fragment included twice is there twice, so an include is a piece
 * of code (a few statements, or local definitions), not a module.
 */
const INCLUDE = /^--- @include "([\w-]+)"$/gm;

/**
 * The source of the Lua script `scripts/<name>.lua`, includes expanded, as
 * Redis runs it. Read from this file's folder: a CommonJS file in every build
 * (`__dirname` under Jest, in `dist/lib` and in the packed `dist/cjs`, where
 * the build copies the `.lua` files next to it).
 * @internal
 */
export function luaSource(name: string): string {
  return expand(join(__dirname, `${name}.lua`), [name]);
}

function expand(file: string, chain: string[]): string {
  return readFileSync(file, 'utf8').replace(INCLUDE, (_line: string, include: string) => {
    if (chain.includes(include)) throw new Error(`Lua include cycle: ${[...chain, include].join(' -> ')}`);
    return expand(join(__dirname, 'includes', `${include}.lua`), [...chain, include]).replace(/\n$/, '');
  });
}
