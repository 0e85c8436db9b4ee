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
  return spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('the published package', () => {
  test(`import "${pkg.name}" gives the public API`, () => {
    const run = node(`import('${pkg.name}').then((m) => console.log(JSON.stringify(Object.keys(m).sort())))`);
    expect(run.stderr).toBe('');
    const names = JSON.parse(run.stdout) as string[];
    for (const name of [
      'LockModule',
      'Locked',
      'LockService',
      'LockProvider',
      'InMemoryLockProvider',
      'createLockProvider',
      'LockExceptionFilter',
      'LockError',
      'LockAcquireError',
      'LockStoreError',
      'LockLostError',
      'LockReentryError',
      'LockOptionsError',
      'LockManager',
      'currentLock',
      'Leader',
      'LeaderService',
      'LeaderElection',
    ]) {
      expect(names).toContain(name);
    }
    // The stores have entries of their own, so the root loads no store code.
    for (const name of [
      'RedisLockProvider',
      'PostgresLockProvider',
      'DEFAULT_POSTGRES_LOCK_TABLE',
      'POSTGRES_LOCK_SCHEMA_SQL',
    ]) {
      expect(names).not.toContain(name);
    }
  });

  test(`"${pkg.name}/redis", "${pkg.name}/postgres" and "${pkg.name}/mysql" export their store, each without the others' code`, () => {
    const run = node(
      `import { createRequire } from 'node:module';
       const require = createRequire(import.meta.url);
       const stores = (store) => Object.keys(require.cache).filter((f) => f.includes('/dist/cjs/stores/' + store + '/')).length;
       const redis = await import('${pkg.name}/redis');
       const afterRedis = { redis: stores('redis'), postgres: stores('postgres') };
       const postgres = await import('${pkg.name}/postgres');
       const afterPostgresMysql = stores('mysql');
       const mysql = await import('${pkg.name}/mysql');
       console.log(JSON.stringify({
         mysql: Object.keys(mysql).sort(),
         afterPostgresMysql,
         afterMysql: stores('mysql'),
         redis: Object.keys(redis).sort(),
         postgres: Object.keys(postgres).sort(),
         afterRedis,
         afterPostgres: stores('postgres'),
         table: postgres.DEFAULT_POSTGRES_LOCK_TABLE,
         schemaNamesTable: postgres.POSTGRES_LOCK_SCHEMA_SQL.includes(postgres.DEFAULT_POSTGRES_LOCK_TABLE),
       }));`,
    );
    expect(run.stderr).toBe('');
    const seen = JSON.parse(run.stdout) as {
      mysql: string[];
      afterPostgresMysql: number;
      afterMysql: number;
      redis: string[];
      postgres: string[];
      afterRedis: { redis: number; postgres: number };
      afterPostgres: number;
      table: string;
      schemaNamesTable: boolean;
    };
    expect(seen.redis).toEqual(['RedisLockProvider']);
    expect(seen.postgres).toEqual(['DEFAULT_POSTGRES_LOCK_TABLE', 'POSTGRES_LOCK_SCHEMA_SQL', 'PostgresLockProvider']);
    expect(seen.afterRedis.redis).toBeGreaterThan(0);
    expect(seen.afterRedis.postgres).toBe(0);
    expect(seen.afterPostgres).toBeGreaterThan(0);
    expect(seen.mysql).toEqual(['DEFAULT_MYSQL_LOCK_TABLE', 'MysqlLockProvider']);
    expect(seen.afterPostgresMysql).toBe(0);
    expect(seen.afterMysql).toBeGreaterThan(0);
    expect(typeof seen.table).toBe('string');
    expect(seen.schemaNamesTable).toBe(true);
  });

  /**
   * The files of the built package and the peers that loading `entry` (by
   * `import` from dist/esm, or `require` from dist/cjs) put in the CommonJS
   * module cache (the ES module entries re-export the CommonJS build, so every
   * module of ours and every peer it requires passes through it).
   */
  function cachedAfter(how: 'import' | 'require', entry: string): string[] {
    const load = how === 'import' ? `await import('${entry}');` : `require('${entry}');`;
    const run = node(
      `import { createRequire } from 'node:module';
       const require = createRequire(import.meta.url);
       ${load}
       console.log(JSON.stringify(Object.keys(require.cache)));`,
    );
    expect(run.stderr).toBe('');
    return (JSON.parse(run.stdout) as string[]).map((f) => f.slice(root.length));
  }

  test.each(['import', 'require'] as const)(
    'the root entry, by %s, loads no store code: neither lib/stores/redis, lib/stores/postgres, lib/stores/mysql, ioredis, pg nor mysql2',
    (how) => {
      const files = cachedAfter(how, pkg.name);
      // What was loaded is the build the test means (dist/cjs, reached from dist/esm for import):
      expect(files).toContain('dist/cjs/index.js');
      expect(files).toContain('dist/cjs/stores/lock-provider.factory.js');
      expect(files).toContain('dist/cjs/stores/memory/index.js');
      expect(
        files.filter((f) =>
          /^dist\/cjs\/stores\/(redis|postgres|mysql)\/|node_modules\/(ioredis|pg|pg-[^/]+|mysql2)\//.test(f),
        ),
      ).toEqual([]);
      // A control: the store entries do load their store's code.
      expect(cachedAfter(how, `${pkg.name}/redis`)).toContain('dist/cjs/stores/redis/redis-lock.provider.js');
      expect(cachedAfter(how, `${pkg.name}/postgres`)).toContain('dist/cjs/stores/postgres/postgres-lock.provider.js');
      expect(cachedAfter(how, `${pkg.name}/mysql`)).toContain('dist/cjs/stores/mysql/mysql-lock.provider.js');
    },
  );

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

  test.each(['import', 'require'] as const)(
    `"${pkg.name}/testing" (by %s) exports the conformance kit and loads no test runner, no store code and no optional peer`,
    (how) => {
      const load = how === 'import' ? `await import('${pkg.name}/testing')` : `require('${pkg.name}/testing')`;
      const run = node(
        `import { createRequire } from 'node:module';
         const require = createRequire(import.meta.url);
         const kit = ${load};
         console.log(JSON.stringify({ names: Object.keys(kit).filter((n) => n !== '__esModule' && n !== 'default').sort(), files: Object.keys(require.cache) }));`,
      );
      expect(run.stderr).toBe('');
      const seen = JSON.parse(run.stdout) as { names: string[]; files: string[] };
      expect(seen.names).toEqual(['describeLockProviderConformance', 'lockProviderConformance', 'runPausedHolder']);
      const files = seen.files.map((f) => f.slice(root.length));
      expect(files).toContain('dist/cjs/testing/index.js');
      expect(
        files.filter((f) =>
          /node_modules\/(jest|jest-[^/]+|@jest\/[^/]+|vitest|@vitest\/[^/]+|ioredis|pg|mysql2|@nestjs\/terminus)\//.test(
            f,
          ),
        ),
      ).toEqual([]);
      expect(files.filter((f) => /^dist\/cjs\/stores\/(redis|postgres|mysql)\//.test(f))).toEqual([]);
    },
  );

  test(`"${pkg.name}/health" exports the terminus indicator`, () => {
    const run = node(`import('${pkg.name}/health').then((m) => console.log(typeof m.LockHealthIndicator))`);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('function');
  });
});
