/**
 * The package as users load it, by name through the "exports" map (resolved by
 * Node's self-reference of the package name to the build): the public API, and
 * optional peers loaded only when configured. The packed tarball itself is
 * checked in packed.spec.ts.
 */
import { spawnSync } from 'node:child_process';
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
  test(`import "${pkg.name}" gives the public API`, () => {
    const run = node(
      `import('${pkg.name}').then((m) => console.log(JSON.stringify(Object.keys(m).sort())))`,
    );
    expect(run.stderr).toBe('');
    const names = JSON.parse(run.stdout) as string[];
    for (const name of ['LockModule', 'Locked', 'LockService', 'LockProvider', 'InMemoryLockProvider', 'RedisLockProvider', 'PostgresLockProvider', 'LockExceptionFilter', 'LockError', 'LockAcquireError', 'LockStoreError', 'LockLostError', 'LockReentryError', 'LockOptionsError', 'LockManager', 'currentLock', 'Leader', 'LeaderService', 'LeaderElection']) {
      expect(names).toContain(name);
    }
  });

  /**
   * The optional peers that `code` made Node load: ES modules seen by a resolve
   * hook, require() calls (the build is CommonJS) seen by wrapping Module._load.
   */
  function resolvedBy(code: string): string[] {
    const run = node(
      `import Module, { register, createRequire } from 'node:module';
       const seen = [];
       const load = Module._load;
       Module._load = function (request, ...rest) { seen.push(request); return load.call(this, request, ...rest); };
       const { port1, port2 } = new MessageChannel();
       port1.on('message', (m) => seen.push(m)); port1.unref();
       register('data:text/javascript,' + encodeURIComponent(
         "let port; export async function initialize(d){port=d.port} export async function resolve(s,c,n){const r=await n(s,c); port.postMessage(r.url); return r}"
       ), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
       ${code}
       await new Promise((r) => setTimeout(r, 100));
       console.log(JSON.stringify(seen.filter((u) => /node_modules\\/(ioredis|pg|@nestjs\\/terminus|@opentelemetry\\/api)\\/|^(ioredis|pg|@nestjs\\/terminus|@opentelemetry\\/api)(\\/|$)/.test(u))));`,
    );
    expect(run.stderr).toBe('');
    return JSON.parse(run.stdout) as string[];
  }

  test('the root entry loads neither ioredis, pg, @nestjs/terminus nor @opentelemetry/api (optional peers)', () => {
    expect(resolvedBy(`await import('${pkg.name}');`)).toEqual([]);
    expect(resolvedBy(`createRequire(import.meta.url)('${pkg.name}');`)).toEqual([]);
    // The hooks do see them when they are loaded, through import and through require:
    expect(resolvedBy(`await import('ioredis'); await import('pg');`).length).toBeGreaterThanOrEqual(2);
    expect(resolvedBy(`createRequire(import.meta.url)('ioredis');`)).toEqual(['ioredis']);
    expect(resolvedBy(`createRequire(import.meta.url)('${pkg.name}/health');`)).toContain('@nestjs/terminus');
  });

  test(`"${pkg.name}/dashboard" exports the lock page module`, () => {
    const run = node(`import('${pkg.name}/dashboard').then((m) => console.log(typeof m.LockDashboardModule))`);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('function');
  });

  test(`"${pkg.name}/health" exports the terminus indicator`, () => {
    const run = node(`import('${pkg.name}/health').then((m) => console.log(typeof m.LockHealthIndicator))`);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('function');
  });
});
