/**
 * The apps of test/apps with the packed library: each app's `npm ci` cached
 * between runs in the system temp folder (keyed by its package.json and
 * lockfile), a fresh copy with the tarball installed and built, Node
 * binaries of other versions (`npx -p node@<version>`), and a booted app.
 */
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot, type PackedLibrary } from './packed-library.js';

const cacheRoot = join(tmpdir(), 'nest-lock-apps-cache');

/** The environment of a child process: no Jest variables of this run, and `node` from `nodeBin` first on PATH. */
export function childEnv(nodeBin?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key !== 'NODE_OPTIONS' && !key.startsWith('JEST_')) env[key] = value;
  }
  if (nodeBin) env.PATH = `${dirname(nodeBin)}:${env.PATH ?? ''}`;
  return env;
}

export function sh(command: string, args: string[], cwd: string, what: string, nodeBin?: string): string {
  const run = spawnSync(command, args, { cwd, env: childEnv(nodeBin), encoding: 'utf8', timeout: 600_000 });
  if (run.status !== 0) {
    throw new Error(
      `${what} failed (${command} ${args.join(' ')} in ${cwd}, exit ${run.status}):\n${run.stdout}\n${run.stderr}`,
    );
  }
  return run.stdout;
}

/** The path of a Node binary of `version`, from the npm registry's `node` package (downloaded once by npx). */
export function nodeBinary(version: string): string {
  const out = sh(
    'npx',
    ['--prefer-offline', '-y', '-p', `node@${version}`, 'node', '-p', 'process.execPath'],
    tmpdir(),
    `Getting Node ${version} from the npm registry`,
  );
  return out.trim().split('\n').pop()!;
}

/** node_modules of `app` after `npm ci`, cached by the hash of its package.json and lockfile. */
export function installedModules(app: string): string {
  const source = join(repoRoot, 'test/apps', app);
  const hash = createHash('sha256')
    .update(readFileSync(join(source, 'package.json')))
    .update(readFileSync(join(source, 'package-lock.json')))
    .digest('hex')
    .slice(0, 16);
  const done = join(cacheRoot, `${app}-${hash}`);
  if (existsSync(done)) return join(done, 'node_modules');
  mkdirSync(cacheRoot, { recursive: true });
  for (const old of readdirSync(cacheRoot).filter((d) => d.startsWith(`${app}-`)))
    rmSync(join(cacheRoot, old), { recursive: true, force: true });
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
export function prepareApp(app: string, packed: PackedLibrary): string {
  const modules = installedModules(app);
  const dir = mkdtempSync(join(tmpdir(), `nest-lock-${app}-`));
  cpSync(join(repoRoot, 'test/apps', app), dir, {
    recursive: true,
    filter: (src) => !/node_modules|[/\\]dist$/.test(src),
  });
  execFileSync('cp', ['-al', modules, join(dir, 'node_modules')]);
  // npm rewrites this file in place: give the copy its own, so the cache keeps its.
  rmSync(join(dir, 'node_modules/.package-lock.json'), { force: true });
  cpSync(join(modules, '.package-lock.json'), join(dir, 'node_modules/.package-lock.json'));
  sh(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--prefer-offline', packed.tarball],
    dir,
    `npm install of the packed library into ${app}`,
  );
  sh('npm', ['run', 'build'], dir, `nest build of ${app}`);
  return dir;
}

/** A booted app: its output so far, and a way to wait for a line. */
export class RunningApp {
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
      if (this.exited !== undefined)
        throw new Error(`the app exited (${this.exited}) before printing "${text}":\n${this.stdout}\n${this.stderr}`);
      if (Date.now() > end)
        throw new Error(`the app did not print "${text}" within ${ms} ms:\n${this.stdout}\n${this.stderr}`);
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
