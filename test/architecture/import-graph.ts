/**
 * The import graph of lib/, read from the sources as text: for each file,
 * the lib files and the packages it imports (static, dynamic, `export … from`,
 * `require`), type-only imports included, since they tie the layers together
 * just the same.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';

/** One import of a lib file. */
export interface LibImport {
  /** The importing file, relative to the repository root (`lib/engine/lock-manager.ts`). */
  readonly from: string;
  /** The imported lib file (same form), or the package name (`@nestjs/common`, `node:fs`). */
  readonly to: string;
  /** Whether `to` is a package rather than a lib file. */
  readonly external: boolean;
}

/** A lib source file. */
export interface LibFile {
  readonly path: string;
  readonly lines: number;
  readonly imports: LibImport[];
  /** The source with its comments blanked out (line for line). */
  readonly code: string;
}

const SOURCE = /\.(ts|cts|mts)$/;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g;

/** Every source file under `lib/` of `root`, with its imports. */
export function readLib(root: string): LibFile[] {
  const files = walk(root, 'lib');
  const known = new Set(files);
  return files.map((path) => {
    const text = readFileSync(join(root, path), 'utf8');
    const imports: LibImport[] = [];
    const code = withoutComments(text);
    for (const match of code.matchAll(SPECIFIER)) {
      const spec = match[2];
      if (!spec.startsWith('.')) {
        imports.push({ from: path, to: packageName(spec), external: true });
        continue;
      }
      const target = resolve(path, spec, known);
      if (target === undefined) throw new Error(`${path}: cannot resolve import "${spec}"`);
      imports.push({ from: path, to: target, external: false });
    }
    return { path, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0), imports, code };
  });
}

/** The import circles among lib files: each a list of files, smallest first (strongly connected components). */
export function circles(edges: readonly LibImport[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to, external } of edges) {
    if (external) continue;
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  // Tarjan's algorithm.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

function walk(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir)).sort()) {
    const path = posix.join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...walk(root, path));
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `./x.js` from `lib/a/b.ts`: `lib/a/x.ts` (or `.cts` for `.cjs`, or a folder's `index.ts`). */
function resolve(from: string, spec: string, known: Set<string>): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.cjs$/, '.cts'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    `${base}/index.ts`,
  ];
  return candidates.find((c) => known.has(c));
}

/** `@nestjs/common/x` → `@nestjs/common`, `ioredis/built/x` → `ioredis`. */
function packageName(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The text with comments blanked out (so an `import` in JSDoc is not counted); strings are left as they are. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
}
