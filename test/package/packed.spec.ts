/**
 * The tarball `npm pack` makes, checked the way a careful user would before
 * adopting the package: what it ships, publint and Are The Types Wrong on it,
 * source maps that resolve, and one copy of the classes whether an app loads
 * it with `require` or `import`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { installUnpacked, packLibrary, repoRoot, type PackedLibrary } from './packed-library.js';

/** The entry points of the "exports" map, as built files under dist/cjs and dist/esm (and sources under lib/). */
const ENTRIES = [
  'index',
  'health/index',
  'dashboard/index',
  'testing/index',
  'stores/redis/index',
  'stores/postgres/index',
  'stores/mysql/index',
];

let packed: PackedLibrary;
let unpacked: string;

beforeAll(() => {
  packed = packLibrary();
  unpacked = installUnpacked(packed.tarball, ['@nestjs', 'rxjs', 'reflect-metadata', 'ioredis', 'pg']);
});
afterAll(() => {
  rmSync(dirname(packed.tarball), { recursive: true, force: true });
  rmSync(unpacked, { recursive: true, force: true });
});

function run(
  command: string,
  args: string[],
  cwd: string,
  timeout = 60_000,
): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout });
}

/** The scripts npm runs when a package is installed as a dependency. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

describe('the packed tarball', () => {
  test('ships the CommonJS build, the ES module entries, the sources the maps point at, README, LICENSE: no tests, bench, sample or fixtures', () => {
    // A file's group: dist/<build>, or its top folder, or the file itself.
    const groupOf = (f: string) => (f.startsWith('dist/') ? f.split('/', 2).join('/') : f.split('/')[0]);
    const groups = new Set(packed.files.map(groupOf));
    expect([...groups].sort()).toEqual(['LICENSE', 'README.md', 'dist/cjs', 'dist/esm', 'lib', 'package.json']);
    expect(
      packed.files.filter((f) => /(^|\/)(test|tests|bench|sample|fixtures?|__tests__)(\/|$)|\.spec\.|\.test\./.test(f)),
    ).toEqual([]);

    const sources = packed.files.filter((f) => f.startsWith('lib/'));
    expect(sources).toContain('lib/index.ts');
    for (const entry of ENTRIES) expect(sources).toContain(`lib/${entry}.ts`);
    for (const source of sources) {
      const built = source.replace(/^lib\//, 'dist/cjs/').replace(/\.(c?)ts$/, '.$1js');
      expect(packed.files).toContain(built);
      if (source.endsWith('.lua') || source.endsWith('.sql')) continue; // the Redis store's Lua scripts and the SQL stores' statements ship as they are, read at run time
      expect(packed.files).toContain(`${built}.map`);
      expect(packed.files).toContain(built.replace(/\.js$/, '.d.ts').replace(/\.cjs$/, '.d.cts'));
    }
    for (const entry of ENTRIES) {
      expect(packed.files).toContain(`dist/esm/${entry}.mjs`);
      expect(packed.files).toContain(`dist/esm/${entry}.d.mts`);
    }
    expect(readFileSync(join(unpacked, 'node_modules/nest-lock/LICENSE'), 'utf8')).toContain('MIT License');
    // The .d.ts keep the JSDoc, so editors show it.
    expect(
      readFileSync(join(unpacked, 'node_modules/nest-lock/dist/cjs/nest/locked.decorator.d.ts'), 'utf8'),
    ).toContain('Runs the method under a lock');
  });

  test('every source map points at sources that ship in the tarball', () => {
    const maps = packed.files.filter((f) => f.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(unpacked, 'node_modules/nest-lock', map), 'utf8')) as {
        sources: string[];
      };
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) {
        expect(packed.files).toContain(normalize(join(dirname(map), source)));
      }
    }
  });

  test('publint finds nothing, not even a suggestion', () => {
    const lint = run(
      join(repoRoot, 'node_modules/.bin/publint'),
      ['run', packed.tarball, '--strict', '--level', 'suggestion'],
      repoRoot,
    );
    expect(lint.stdout + lint.stderr).toContain('All good!');
    expect(lint.status).toBe(0);
  });

  test('Are The Types Wrong finds no problem for node10, node16 (CommonJS and ESM) and bundler resolution', () => {
    const attw = run(join(repoRoot, 'node_modules/.bin/attw'), [packed.tarball, '--format', 'json'], repoRoot);
    const report = JSON.parse(attw.stdout) as {
      analysis: { problems: unknown[]; entrypoints: Record<string, unknown> };
    };
    expect(report.analysis.problems).toEqual([]);
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual([
      '.',
      './dashboard',
      './health',
      './mysql',
      './package.json',
      './postgres',
      './redis',
      './testing',
    ]);
    expect(attw.status).toBe(0);
  });

  test('require and import in one process give the same classes, store entries included (one copy: overrideProvider(LockProvider) matches)', () => {
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/');
      const cjs = require('nest-lock');
      const esm = await import('nest-lock');
      const cjsHealth = require('nest-lock/health');
      const esmHealth = await import('nest-lock/health');
      const cjsRedis = require('nest-lock/redis');
      const esmRedis = await import('nest-lock/redis');
      const cjsPostgres = require('nest-lock/postgres');
      const esmPostgres = await import('nest-lock/postgres');
      const names = Object.keys(cjs).filter((n) => n !== '__esModule').sort();
      console.log(JSON.stringify({
        where: require.resolve('nest-lock'),
        names,
        esmNames: Object.keys(esm).sort(),
        different: names.filter((n) => cjs[n] !== esm[n]),
        sameHealth: cjsHealth.LockHealthIndicator === esmHealth.LockHealthIndicator && typeof esmHealth.LockHealthIndicator === 'function',
        sameProvider: cjs.LockProvider === esm.LockProvider && typeof esm.LockProvider === 'function',
        sameRedis: cjsRedis.RedisLockProvider === esmRedis.RedisLockProvider && typeof esmRedis.RedisLockProvider === 'function',
        samePostgres: cjsPostgres.PostgresLockProvider === esmPostgres.PostgresLockProvider && typeof esmPostgres.PostgresLockProvider === 'function',
        redisIsAProvider: esmRedis.RedisLockProvider.prototype instanceof esm.LockProvider,
        sameService: cjs.LockService === esm.LockService,
      }));`;
    const both = run(process.execPath, ['--input-type=module', '-e', script], unpacked);
    expect(both.stderr).toBe('');
    const seen = JSON.parse(both.stdout) as {
      where: string;
      names: string[];
      esmNames: string[];
      different: string[];
      sameHealth: boolean;
      sameRedis: boolean;
      samePostgres: boolean;
      redisIsAProvider: boolean;
      sameProvider: boolean;
      sameService: boolean;
    };
    expect(seen.where).toBe(join(unpacked, 'node_modules/nest-lock/dist/cjs/index.js'));
    // The ES module entry exports every name of the CommonJS build (it is generated from it), and the same values.
    expect(seen.esmNames).toEqual(seen.names);
    expect(seen.names).toEqual(
      expect.arrayContaining([
        'LockModule',
        'Locked',
        'LockProvider',
        'LockService',
        'InMemoryLockProvider',
        'LockExceptionFilter',
      ]),
    );
    expect(seen.different).toEqual([]);
    expect(seen).toMatchObject({
      sameProvider: true,
      sameService: true,
      sameHealth: true,
      sameRedis: true,
      samePostgres: true,
      redisIsAProvider: true,
    });
  });

  test('its manifest has no install-time script (the repository keeps prepare, for git installs), so npm installs it without a warning', () => {
    const scripts = (file: string) =>
      Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { scripts?: object }).scripts ?? {});
    expect(
      scripts(join(unpacked, 'node_modules/nest-lock/package.json')).filter((s) => INSTALL_SCRIPTS.includes(s)),
    ).toEqual([]);
    expect(scripts(join(repoRoot, 'package.json'))).toContain('prepare');
    // postpack put the repository's own manifest back (scripts/packed-manifest.mjs).
    expect(existsSync(join(repoRoot, 'dist/package.json.before-pack'))).toBe(false);

    const app = mkdtempSync(join(tmpdir(), 'nest-lock-tarball-app-'));
    try {
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
      const install = run(
        'npm',
        ['install', '--no-audit', '--no-fund', '--prefer-offline', packed.tarball],
        app,
        300_000,
      );
      expect({ status: install.status, stderr: install.stderr }).toMatchObject({ status: 0 });
      // npm 11 lists a dependency's install-time scripts as "install-scripts" warnings.
      expect(install.stdout + install.stderr).not.toMatch(/install-scripts|nest-lock@/);
      const load = run(process.execPath, ['-e', "console.log(typeof require('nest-lock').LockModule)"], app);
      expect(load.stdout.trim()).toBe('function');
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  }, 360_000);
});
