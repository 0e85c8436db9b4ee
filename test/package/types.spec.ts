/**
 * The shipped declarations, type-checked as an app compiles them with
 * `skipLibCheck: false`: an app that installed only the peers it uses must
 * compile. An app on Redis has no `pg` nor `@types/pg`; an app on PostgreSQL
 * has no `ioredis`; an app on MySQL has neither; none has the integration
 * packages beyond HTTP (GraphQL, microservices, WebSockets, events, BullMQ). Each consumer is compiled as
 * an ES module (`.mts`, the `import` condition) and as CommonJS (`.cts`, the
 * `require` condition).
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { installUnpacked, packLibrary, repoRoot, type PackedLibrary } from './packed-library.js';

let packed: PackedLibrary;
const folders: string[] = [];

beforeAll(() => {
  packed = packLibrary();
});
afterAll(() => {
  rmSync(dirname(packed.tarball), { recursive: true, force: true });
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Installs the tarball with `peers` only, writes `files`, and runs tsc on them (strict, no skipLibCheck): its error lines. */
function compile(peers: string[], files: Record<string, string>): string[] {
  const dir = installUnpacked(packed.tarball, peers);
  folders.push(dir);
  for (const [name, code] of Object.entries(files)) writeFileSync(join(dir, name), code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        noEmit: true,
        types: ['node'],
      },
      files: Object.keys(files),
    }),
  );
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const run = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', dir], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return `${run.stdout}${run.stderr}`.split('\n').filter((line) => /error TS\d+/.test(line));
}

/**
 * The Nest packages an HTTP app has, each linked by name (not the repository's
 * whole @nestjs folder): a type that needed an integration package
 * (`@nestjs/microservices`, `@nestjs/websockets`, `@nestjs/event-emitter`, ...)
 * would not resolve, and the compile would fail.
 */
const NEST = ['@nestjs/common', '@nestjs/core', '@nestjs/terminus', 'reflect-metadata', 'rxjs', '@types/node'];

/** An app's module on the root entry, with `store` as its LockModule options. */
function appModule(store: string, extraImports = ''): string {
  return `import 'reflect-metadata';
import { Controller, Injectable, Module, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { InMemoryLockProvider, Leader, LockExceptionFilter, LockModule, LockProvider, LockService, Locked, type Leadership } from 'nest-lock';
import { LockDashboardModule } from 'nest-lock/dashboard';
${extraImports}

@Controller('payouts')
export class PayoutsController {
  constructor(private readonly locks: LockService) {}

  @Post('run')
  @Locked('payouts', { onHeld: 'wait', waitTimeout: 5_000 })
  run(): { paid: boolean } {
    return { paid: true };
  }
}

@Injectable()
export class Relay {
  @Leader('relay')
  async relay(leadership: Leadership): Promise<void> {
    while (leadership.leading) await new Promise((r) => setTimeout(r, 100));
  }
}

@Module({
  imports: [LockModule.forRoot(${store}), LockDashboardModule.register({ path: '/admin/locks' })],
  controllers: [PayoutsController],
  providers: [Relay, { provide: APP_FILTER, useClass: LockExceptionFilter }],
})
export class AppModule {}

export const testStore: LockProvider = new InMemoryLockProvider();
`;
}

describe('the shipped declarations, without skipLibCheck', () => {
  test('an app on Redis compiles with only @nestjs/common, core and terminus, reflect-metadata, rxjs and ioredis installed: no pg, no @types/pg, no integration package beyond HTTP', () => {
    const redisApp = appModule(
      '{ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", ttl: 30_000 }',
      "import { RedisLockProvider } from 'nest-lock/redis';\nimport { LockHealthIndicator } from 'nest-lock/health';\nexport const store = new RedisLockProvider({ redis: 'redis://127.0.0.1:6379' });\nexport type Health = LockHealthIndicator;",
    );
    // A control: the same compile rejects a misuse of the API (the check is strict, and reads nest-lock's types).
    const wrong = "import { LockModule } from 'nest-lock';\nLockModule.forRoot({ ttl: '30s' });\n";
    const errors = compile([...NEST, 'ioredis'], { 'app.mts': redisApp, 'app.cts': redisApp, 'wrong.mts': wrong });
    expect(errors.filter((line) => !line.startsWith('wrong.mts'))).toEqual([]);
    expect(errors.filter((line) => line.startsWith('wrong.mts')).length).toBeGreaterThan(0);
  }, 180_000);

  test('an app that passes its node-redis client compiles with redis and no ioredis; with ioredis there too, a wrong object does not', () => {
    const nodeRedisApp = appModule(
      '{ redis: client, ttl: 30_000 }',
      "import { createClient, createCluster } from 'redis';\nimport { RedisLockProvider, type RedisConnection } from 'nest-lock/redis';\n" +
        "const client = createClient({ url: 'redis://127.0.0.1:6379', RESP: 3 });\n" +
        "export const store = new RedisLockProvider({ redis: createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }) });\n" +
        'export const connection: RedisConnection = client;',
    );
    const wrong =
      "import { createClientPool } from 'redis';\nimport { LockModule } from 'nest-lock';\nLockModule.forRoot({ redis: createClientPool() });\n";
    const alone = compile([...NEST, 'redis', '@redis'], { 'app.mts': nodeRedisApp, 'app.cts': nodeRedisApp });
    expect(alone).toEqual([]);
    // With ioredis installed the union is exact: a node-redis pool is not a client the store takes.
    const both = compile([...NEST, 'redis', '@redis', 'ioredis'], { 'app.mts': nodeRedisApp, 'wrong.mts': wrong });
    expect(both.filter((line) => !line.startsWith('wrong.mts'))).toEqual([]);
    expect(both.filter((line) => line.startsWith('wrong.mts')).join('\n')).toMatch(
      /^wrong\.mts\(3,\d+\): error TS2322/,
    );
  }, 180_000);

  test("an app on PostgreSQL compiles with pg and @types/pg and no ioredis, and keeps pg's types (a wrong pool option fails)", () => {
    const pgApp = appModule(
      '{ postgres: process.env.DATABASE_URL ?? "postgres://127.0.0.1/app" }',
      "import { PostgresLockProvider } from 'nest-lock/postgres';\nexport const store = new PostgresLockProvider({ connection: { connectionString: 'postgres://127.0.0.1/app', max: 4 } });",
    );
    const wrong =
      "import { LockModule } from 'nest-lock';\nLockModule.forRoot({ postgres: { connectionString: 42 } });\n";
    const errors = compile([...NEST, 'pg', '@types/pg', 'pg-protocol', 'pg-types'], {
      'app.mts': pgApp,
      'app.cts': pgApp,
      'wrong.mts': wrong,
    });
    expect(errors.filter((line) => !line.startsWith('wrong.mts'))).toEqual([]);
    expect(errors.filter((line) => line.startsWith('wrong.mts')).join('\n')).toMatch(
      /^wrong\.mts\(2,\d+\): error TS2322/,
    );
  }, 180_000);

  test("an app on MySQL compiles with mysql2 and no ioredis nor pg, on an app's pool (callback or promise), and keeps mysql2's types (a wrong pool option fails)", () => {
    const mysqlApp = appModule(
      '{ mysql: process.env.MYSQL_URL ?? "mysql://root@127.0.0.1:3306/app" }',
      "import { createPool } from 'mysql2';\nimport { createPool as createPromisePool } from 'mysql2/promise';\nimport { MysqlLockProvider } from 'nest-lock/mysql';\n" +
        "export const store = new MysqlLockProvider({ connection: createPool({ host: '127.0.0.1', database: 'app' }), tableName: 'app_locks' });\n" +
        "export const onPromisePool = new MysqlLockProvider({ connection: createPromisePool({ uri: 'mysql://root@127.0.0.1/app' }) });\n" +
        'export const schema: string = MysqlLockProvider.schemaSql();',
    );
    const wrong = "import { LockModule } from 'nest-lock';\nLockModule.forRoot({ mysql: { port: 'x' } });\n";
    const errors = compile([...NEST, 'mysql2', 'sql-escaper'], {
      'app.mts': mysqlApp,
      'app.cts': mysqlApp,
      'wrong.mts': wrong,
    });
    expect(errors.filter((line) => !line.startsWith('wrong.mts'))).toEqual([]);
    expect(errors.filter((line) => line.startsWith('wrong.mts')).join('\n')).toMatch(
      /^wrong\.mts\(2,\d+\): error TS2322/,
    );
  }, 180_000);
});
