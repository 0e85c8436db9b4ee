/**
 * The packed library in the Nest apps teams run (test/apps: one app per shape,
 * as `nest new` writes it, trimmed to a locked route, a locked cron task and
 * the app's own test). Each app is installed from its lockfile, gets the
 * tarball through `npm install`, is built, then on Node 20.19, 22 and 24:
 * booted and hit concurrently, and tested with its own runner. These runs are
 * the compatibility table of docs/packaging.md.
 *
 * Slow parts are cached between runs (packed-apps.ts): each app's `npm ci`
 * and the Node binaries.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packLibrary, repoRoot, type PackedLibrary } from './packed-library.js';
import { childEnv, nodeBinary, prepareApp, RunningApp } from './packed-apps.js';

/** The Node versions of the table: the lowest Nest 12 supports, and the current majors. */
const NODES = [
  ['20.19', '20.19.0'],
  ['22', '22'],
  ['24', '24'],
] as const;
type NodeColumn = (typeof NODES)[number][0];

interface Shape {
  app: string;
  label: string;
  /** Where the app's own test runner cannot run, and the error it stops with instead. */
  testsFailOn?: { nodes: NodeColumn[]; error: RegExp };
}

const SHAPES: Shape[] = [
  { app: 'nest12-esm-vitest', label: 'Nest 12, ESM, Vitest' },
  {
    app: 'nest12-cjs-jest',
    label: 'Nest 12, CommonJS, Jest',
    // Jest can require() an ES module (here Nest 12's own @nestjs/testing) only from Node 24.9 on.
    testsFailOn: { nodes: ['20.19', '22'], error: /Must use import to load ES Module: .*@nestjs\/testing/ },
  },
  { app: 'nest11-cjs-jest', label: 'Nest 11, CommonJS, Jest' },
];

test('the apps run the same code: their sources differ only where the module system makes them (import paths, the bootstrap call)', () => {
  const normalized = (app: string): Record<string, string> => {
    const dir = join(repoRoot, 'test/apps', app, 'src');
    return Object.fromEntries(
      readdirSync(dir).map((file) => [
        file,
        readFileSync(join(dir, file), 'utf8')
          .replace(/(from '\.\/[\w.-]+)\.js'/g, "$1'")
          .replace(/^(await|void) bootstrap\(\);$/m, 'bootstrap();'),
      ]),
    );
  };
  const [first, ...others] = SHAPES.map((s) => normalized(s.app));
  for (const other of others) expect(other).toEqual(first);
});

describe.each(SHAPES)('$label (test/apps/$app) with the packed library', (shape) => {
  let packed: PackedLibrary;
  let dir: string;

  beforeAll(() => {
    packed = packLibrary();
    dir = prepareApp(shape.app, packed);
  }, 900_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (packed) rmSync(dirname(packed.tarball), { recursive: true, force: true });
  });

  describe.each(NODES)('on Node %s', (column, version) => {
    let node: string;
    beforeAll(() => {
      node = nodeBinary(version);
    }, 300_000);

    test('boots; the locked route answers 201 to one of 4 concurrent callers and 409 to the others; the locked cron task runs; no warning', async () => {
      // Port 0: the system picks a free port, and the app logs the URL it listens on.
      const app = new RunningApp(spawn(node, ['dist/main.js'], { cwd: dir, env: { ...childEnv(node), PORT: '0' } }));
      try {
        await app.waitFor('Listening on http', 60_000);
        const port = Number(/Listening on http:\/\/\S+:(\d+)/.exec(app.stdout)![1]);
        const answers = await Promise.all(
          [1, 2, 3, 4].map(async () => {
            const res = await fetch(`http://127.0.0.1:${port}/report`, { method: 'POST' });
            return { status: res.status, body: (await res.json()) as { lock?: string; done?: boolean } };
          }),
        );
        expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409]);
        expect(answers.find((a) => a.status === 201)!.body).toEqual({ done: true });
        for (const held of answers.filter((a) => a.status === 409)) expect(held.body.lock).toBe('report');
        await app.waitFor('digest sent', 10_000);
        const health = await fetch(`http://127.0.0.1:${port}/health`);
        expect(health.status).toBe(200);
        expect(((await health.json()) as { info: { locks: { status: string } } }).info.locks.status).toBe('up');
      } catch (err) {
        throw new Error(
          `${(err as Error).message}\n--- the app's stdout ---\n${app.stdout}\n--- its stderr ---\n${app.stderr}`,
          { cause: err },
        );
      } finally {
        await app.stop();
      }
      // Nothing else on stderr: no ExperimentalWarning for require() of Nest 12's ES modules, no error.
      // (The cron package notes a tick that started late on a busy machine: load, not a fault.)
      const stderr = app.stderr
        .split('\n')
        .filter((line) => line !== '' && !/^\[Cron\] Missed execution deadline by \d+ms/.test(line));
      expect(stderr).toEqual([]);
    }, 120_000);

    const fails = shape.testsFailOn?.nodes.includes(column);
    test(
      fails
        ? "its own tests cannot start: the test runner cannot load Nest's ES modules on this Node"
        : 'its own tests pass (LockProvider overridden with InMemoryLockProvider, another instance played with hold())',
      () => {
        const run = spawnSync('npm', ['test'], { cwd: dir, env: childEnv(node), encoding: 'utf8', timeout: 180_000 });
        const output = `${run.stdout}\n${run.stderr}`;
        if (fails) {
          expect(run.status).not.toBe(0);
          expect(output).toMatch(shape.testsFailOn!.error);
        } else {
          if (run.status !== 0) throw new Error(`npm test of ${shape.app} on Node ${column} failed:\n${output}`);
          expect(output).toMatch(/3 passed/);
        }
      },
      240_000,
    );
  });
});
