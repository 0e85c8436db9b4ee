/**
 * The packed library on the node-redis client a Nest 12 app already has
 * (docs/stores.md): test/apps/nest12-cache-node-redis follows Nest's caching docs
 * (`@nestjs/cache-manager` over Keyv and `@keyv/redis`) and passes the
 * client of its Keyv store to `LockModule.forRootAsync` (injecting
 * `CACHE_MANAGER`). The app is installed from its lockfile (cached, see
 * packed-apps.ts), gets the tarball, is built with tsc, and runs on this Node.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Redis } from 'ioredis';
import { packLibrary, type PackedLibrary } from './packed-library.js';
import { childEnv, prepareApp, RunningApp } from './packed-apps.js';

const APP = 'nest12-cache-node-redis';
/** Not database 0: the lock keys land where the cache's client points, or this test sees them missing. */
const DB = 11;

describe(`test/apps/${APP} with the packed library`, () => {
  let packed: PackedLibrary;
  let dir: string;
  const run = randomBytes(4).toString('hex');
  const prefix = `cache33-${run}:`;
  const clientName = `cache33-${run}`;
  const onDb = new Redis({ db: DB, lazyConnect: true });
  const onDb0 = new Redis({ db: 0, lazyConnect: true });

  beforeAll(() => {
    packed = packLibrary();
    dir = prepareApp(APP, packed);
  }, 900_000);
  afterAll(async () => {
    const keys = await onDb.keys(`{${prefix}*`);
    await onDb.del(...keys, 'report');
    onDb.disconnect();
    onDb0.disconnect();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (packed) rmSync(dirname(packed.tarball), { recursive: true, force: true });
  });

  /** The app on the cache's database, with its names; `port()` waits until it listens. */
  function start() {
    const env = {
      ...childEnv(),
      NO_COLOR: '1',
      PORT: '0',
      REDIS_URL: `redis://127.0.0.1:6379/${DB}`,
      CLIENT_NAME: clientName,
      LOCK_PREFIX: prefix,
    };
    const child = spawn(process.execPath, ['dist/main.js'], { cwd: dir, env });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))),
    );
    const app = Object.assign(new RunningApp(child), {
      async port(): Promise<number> {
        await app.waitFor('Listening on http', 60_000);
        return Number(/Listening on http:\/\/\S+:(\d+)/.exec(app.stdout)![1]);
      },
    });
    return { child, exited, app };
  }

  test("two concurrent calls of the @Locked route: one 201, one 409; the lock keys are on the cache client's database, run on its connection; SIGTERM shuts down without an error", async () => {
    const { child, exited, app } = start();
    try {
      const port = await app.port();
      const answers = await Promise.all(
        [1, 2].map(async () => {
          const res = await fetch(`http://127.0.0.1:${port}/report`, { method: 'POST' });
          return { status: res.status, body: (await res.json()) as { lock?: string; done?: boolean } };
        }),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
      expect(answers.find((a) => a.status === 409)!.body.lock).toBe('report');

      // The fencing counter outlives the lock: on the cache's database, not on database 0.
      expect(await onDb.exists(`{${prefix}report}:fence`)).toBe(1);
      expect(await onDb0.exists(`{${prefix}report}:fence`)).toBe(0);
      // The route cached its result through the same client, on the same database.
      expect(await onDb.exists('report')).toBe(1);
      // The lock scripts ran on the cache's own connection (node-redis names it), on that database.
      const connections = ((await onDb.client('LIST')) as string)
        .split('\n')
        .filter((line) => line.includes(` name=${clientName} `));
      expect(connections.length).toBeGreaterThanOrEqual(1);
      for (const line of connections) expect(line).toContain(` db=${DB} `);
      expect(connections.some((line) => / cmd=(evalsha|eval|set) /.test(line))).toBe(true);
    } catch (err) {
      await app.stop();
      throw new Error(
        `${(err as Error).message}\n--- the app's stdout ---\n${app.stdout}\n--- its stderr ---\n${app.stderr}`,
        { cause: err },
      );
    }
    // Shutdown: the lock module closes only what it opened (its subscriber); cache-manager closes its client.
    child.kill('SIGTERM');
    await exited;
    expect(`${app.stdout}${app.stderr}`).not.toMatch(/ERROR|WARN|^\s+at /m);
    const left = ((await onDb.client('LIST')) as string)
      .split('\n')
      .filter((line) => line.includes(` name=${clientName} `));
    expect(left).toEqual([]);
  }, 120_000);

  test('SIGTERM while the @Locked route runs: the lock is released before cache-manager closes its client (no failed release, the key is gone at once)', async () => {
    const { child, exited, app } = start();
    try {
      const port = await app.port();
      // The route holds the lock for 1.5 s; the answer may never come (the app stops under it).
      const answered = fetch(`http://127.0.0.1:${port}/report`, { method: 'POST' }).catch(() => undefined);
      const end = Date.now() + 10_000;
      while ((await onDb.exists(`{${prefix}report}`)) === 0) {
        if (Date.now() > end) throw new Error('the route did not take its lock within 10 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      child.kill('SIGTERM');
      await exited;
      await answered;
      expect(`${app.stdout}${app.stderr}`).not.toMatch(/Releasing lock/);
      expect(await onDb.exists(`{${prefix}report}`)).toBe(0);
    } catch (err) {
      await app.stop();
      throw new Error(
        `${(err as Error).message}\n--- the app's stdout ---\n${app.stdout}\n--- its stderr ---\n${app.stderr}`,
        { cause: err },
      );
    }
  }, 120_000);
});
