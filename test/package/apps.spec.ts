/**
 * The packed library in the Nest apps teams run (test/apps: one app per shape,
 * as `nest new` writes it, trimmed to a locked route, a locked cron task and
 * the app's own test). Each app is installed from its lockfile, gets the
 * tarball through `npm install`, is built, then on Node 20.19, 22 and 24:
 * booted and hit concurrently, and tested with its own runner. These runs are
 * the compatibility table of the README.
 *
 * Slow parts are cached between runs in the system temp folder: each app's
 * `npm ci` (keyed by its package.json and lockfile) and the Node binaries
 * (`npx -p node@<version>`).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packLibrary, repoRoot, type PackedLibrary } from './packed-library.js';

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

const cacheRoot = join(tmpdir(), 'nest-lock-apps-cache');

/** The environment of a child process: no Jest variables of this run, and `node` from `nodeBin` first on PATH. */
function childEnv(nodeBin?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key !== 'NODE_OPTIONS' && !key.startsWith('JEST_')) env[key] = value;
  }
  if (nodeBin) env.PATH = `${dirname(nodeBin)}:${env.PATH ?? ''}`;
  return env;
}

function sh(command: string, args: string[], cwd: string, what: string, nodeBin?: string): string {
  const run = spawnSync(command, args, { cwd, env: childEnv(nodeBin), encoding: 'utf8', timeout: 600_000 });
  if (run.status !== 0) {
    throw new Error(`${what} failed (${command} ${args.join(' ')} in ${cwd}, exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  }
  return run.stdout;
}

/** The path of a Node binary of `version`, from the npm registry's `node` package (downloaded once by npx). */
function nodeBinary(version: string): string {
  const out = sh(
    'npx',
    ['--prefer-offline', '-y', '-p', `node@${version}`, 'node', '-p', 'process.execPath'],
    tmpdir(),
    `Getting Node ${version} from the npm registry`,
  );
  return out.trim().split('\n').pop()!;
}

/** node_modules of `app` after `npm ci`, cached by the hash of its package.json and lockfile. */
function installedModules(app: string): string {
  const source = join(repoRoot, 'test/apps', app);
  const hash = createHash('sha256')
    .update(readFileSync(join(source, 'package.json')))
    .update(readFileSync(join(source, 'package-lock.json')))
    .digest('hex')
    .slice(0, 16);
  const done = join(cacheRoot, `${app}-${hash}`);
  if (existsSync(done)) return join(done, 'node_modules');
  mkdirSync(cacheRoot, { recursive: true });
  for (const old of readdirSync(cacheRoot).filter((d) => d.startsWith(`${app}-`))) rmSync(join(cacheRoot, old), { recursive: true, force: true });
  const work = mkdtempSync(join(cacheRoot, `.${app}-`));
  cpSync(join(source, 'package.json'), join(work, 'package.json'));
  cpSync(join(source, 'package-lock.json'), join(work, 'package-lock.json'));
  sh('npm', ['ci', '--no-audit', '--no-fund'], work, `npm ci of test/apps/${app}`);
  try {
    renameSync(work, done);
  } catch (err) {
    // Another run cached the same install meanwhile: use that one.
    if (!existsSync(done)) throw err;
    rmSync(work, { recursive: true, force: true });
  }
  return join(done, 'node_modules');
}

/** A fresh copy of `app` with its cached node_modules (hard links), the packed library installed, and built. */
function prepareApp(app: string, packed: PackedLibrary): string {
  const modules = installedModules(app);
  const dir = mkdtempSync(join(tmpdir(), `nest-lock-${app}-`));
  cpSync(join(repoRoot, 'test/apps', app), dir, { recursive: true, filter: (src) => !/node_modules|[/\\]dist$/.test(src) });
  execFileSync('cp', ['-al', modules, join(dir, 'node_modules')]);
  // npm rewrites this file in place: give the copy its own, so the cache keeps its.
  rmSync(join(dir, 'node_modules/.package-lock.json'), { force: true });
  cpSync(join(modules, '.package-lock.json'), join(dir, 'node_modules/.package-lock.json'));
  sh('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', packed.tarball], dir, `npm install of the packed library into ${app}`);
  sh('npm', ['run', 'build'], dir, `nest build of ${app}`);
  return dir;
}

/** A booted app: its output so far, and a way to wait for a line. */
class RunningApp {
  stdout = '';
  stderr = '';
  private exited: number | null | undefined;

  constructor(private readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr += d));
    child.on('exit', (code) => (this.exited = code));
  }

  async waitFor(text: string, ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (!this.stdout.includes(text)) {
      if (this.exited !== undefined) throw new Error(`the app exited (${this.exited}) before printing "${text}":\n${this.stdout}\n${this.stderr}`);
      if (Date.now() > end) throw new Error(`the app did not print "${text}" within ${ms} ms:\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.exited !== undefined) return;
    const gone = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await gone;
  }
}

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
        throw new Error(`${(err as Error).message}\n--- the app's stdout ---\n${app.stdout}\n--- its stderr ---\n${app.stderr}`, { cause: err });
      } finally {
        await app.stop();
      }
      // Nothing else on stderr: no ExperimentalWarning for require() of Nest 12's ES modules, no error.
      // (The cron package notes a tick that started late on a busy machine: load, not a fault.)
      const stderr = app.stderr.split('\n').filter((line) => line !== '' && !/^\[Cron\] Missed execution deadline by \d+ms/.test(line));
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
