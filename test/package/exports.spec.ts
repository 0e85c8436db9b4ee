/**
 * The package as users import it: ESM entry points through the "exports" map
 * (resolved by Node's self-reference of the package name), compiled output
 * with JSDoc in the .d.ts, and optional peers loaded only when configured.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { name: string; files: string[] };

function node(code: string): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: root, env, encoding: 'utf8', timeout: 20_000 });
}

describe('the published package', () => {
  test(`import "${pkg.name}" resolves to the compiled ESM entry with the public API`, () => {
    const run = node(
      `import('${pkg.name}').then((m) => console.log(JSON.stringify(Object.keys(m).sort())))`,
    );
    expect(run.stderr).toBe('');
    const names = JSON.parse(run.stdout) as string[];
    for (const name of ['LockModule', 'Locked', 'LockService', 'LockProvider', 'InMemoryLockProvider', 'RedisLockProvider', 'PostgresLockProvider', 'LockExceptionFilter', 'LockError', 'LockAcquireError', 'LockStoreError', 'LockLostError', 'LockReentryError', 'LockOptionsError', 'LockManager', 'currentLock']) {
      expect(names).toContain(name);
    }
  });

  /** URLs of the node_modules packages that `code` made Node resolve, seen by a resolve hook. */
  function resolvedBy(code: string): string[] {
    const run = node(
      `import { register } from 'node:module';
       const seen = [];
       const { port1, port2 } = new MessageChannel();
       port1.on('message', (m) => seen.push(m)); port1.unref();
       register('data:text/javascript,' + encodeURIComponent(
         "let port; export async function initialize(d){port=d.port} export async function resolve(s,c,n){const r=await n(s,c); port.postMessage(r.url); return r}"
       ), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
       ${code}
       await new Promise((r) => setTimeout(r, 100));
       console.log(JSON.stringify(seen.filter((u) => /node_modules\\/(ioredis|pg|@nestjs\\/terminus)\\//.test(u))));`,
    );
    expect(run.stderr).toBe('');
    return JSON.parse(run.stdout) as string[];
  }

  test('the root entry loads neither ioredis, pg nor @nestjs/terminus (optional peers)', () => {
    expect(resolvedBy(`await import('${pkg.name}');`)).toEqual([]);
    // The hook does see them when they are loaded:
    expect(resolvedBy(`await import('ioredis'); await import('pg');`).length).toBeGreaterThanOrEqual(2);
  });

  test(`"${pkg.name}/health" exports the terminus indicator`, () => {
    const run = node(`import('${pkg.name}/health').then((m) => console.log(typeof m.LockHealthIndicator))`);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('function');
  });

  test('npm pack ships the compiled library with its .d.ts (JSDoc kept), and no tests or sample', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
    const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path);
    expect(files).toContain('dist/lib/index.js');
    expect(files).toContain('dist/lib/index.d.ts');
    expect(files).toContain('dist/lib/health/index.js');
    expect(files).toContain('README.md');
    expect(files.some((f) => f.startsWith('dist/test') || f.startsWith('dist/sample') || f.startsWith('test/'))).toBe(false);
    const dts = readFileSync(`${root}/dist/lib/locked.decorator.d.ts`, 'utf8');
    expect(dts).toContain('Runs the method under a lock');
  });
});
