/**
 * Test helper: a throw-away PostgreSQL server of the test's own (initdb into a
 * temp dir, a free port, 127.0.0.1 only, trust auth, fsync off), so that a
 * test can stop and restart the database without touching the machine's
 * shared cluster. A missing binary or OS user fails the test with a message
 * that names it.
 *
 * PostgreSQL refuses to run as root: when the tests run as root, initdb and
 * pg_ctl run as the OS user `postgres` (override with TEST_POSTGRES_OS_USER)
 * through `runuser`, and the temp dir belongs to that user.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  accessSync,
  appendFileSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.js';

/** How the server stops (`pg_ctl -m`): `fast` ends sessions cleanly, `immediate` is a crash (recovery on the next start). */
export type StopMode = 'smart' | 'fast' | 'immediate';

const OS_USER = process.env.TEST_POSTGRES_OS_USER ?? 'postgres';
const asRoot = process.getuid?.() === 0;

/** Where a PostgreSQL server binary is: PATH first, then Debian's /usr/lib/postgresql/<version>/bin (newest first). */
export function findBinary(name: string): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    dirs.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new Error(
    `'${name}' was not found on PATH nor in ${debian}/*/bin: the PostgreSQL restart tests start a server of their own. ` +
      `Install PostgreSQL's server binaries (initdb, pg_ctl, postgres; Debian: postgresql) to run them.`,
  );
}

/** uid and gid of the OS user that runs the server (only needed as root). */
function osUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[0] === OS_USER);
  if (!line) {
    throw new Error(
      `the OS user '${OS_USER}' does not exist: PostgreSQL refuses to run as root, so these tests (running as root) ` +
        `run initdb and pg_ctl as '${OS_USER}'. Create it (Debian's postgresql package does) or set TEST_POSTGRES_OS_USER.`,
    );
  }
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** `[file, args]` that run `binary args` as the server's OS user (as root) or as ourselves. */
function command(binary: string, args: string[]): [string, string[]] {
  if (!asRoot) return [binary, args];
  let runuser: string;
  try {
    runuser = findBinary('runuser');
  } catch {
    throw new Error(
      `'runuser' was not found on PATH: as root, the PostgreSQL restart tests run ${binary} as '${OS_USER}' with it (util-linux).`,
    );
  }
  return [runuser, ['-u', OS_USER, '--', binary, ...args]];
}

/** Runs a PostgreSQL binary; rejects with its output. */
function run(binary: string, args: string[], cwd: string, timeout = 30_000): Promise<string> {
  const [file, argv] = command(binary, args);
  return new Promise((resolve, reject) => {
    execFile(file, argv, { cwd, timeout, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${binary} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(stdout + stderr);
    });
  });
}

/** Servers not cleaned up yet: stopped when the process exits, whatever happened to the test. */
const live = new Set<PostgresServer>();
process.once('exit', () => {
  for (const server of live) server.cleanupSync();
});

/** A PostgreSQL server in a temp dir of its own, listening on 127.0.0.1:`port` (and a unix socket in that dir). */
export class PostgresServer {
  private running = false;

  private constructor(
    readonly port: number,
    /** The temp dir: data in `data/`, the log in `server.log`, the unix socket here too. */
    readonly dir: string,
    private readonly pgCtl: string,
    /** The password of user `postgres` (password auth); `undefined`: trust auth. */
    readonly password?: string,
  ) {}

  /** `postgres://postgres[:password]@127.0.0.1:<port>/postgres`. */
  get url(): string {
    return `postgres://postgres${this.password === undefined ? '' : `:${encodeURIComponent(this.password)}`}@127.0.0.1:${this.port}/postgres`;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  private get log(): string {
    return join(this.dir, 'server.log');
  }

  /** initdb (about 2 s: once per spec file), then start. With `password`: password auth (scram-sha-256) for every connection. */
  static async create({ password }: { password?: string } = {}): Promise<PostgresServer> {
    const initdb = findBinary('initdb');
    const pgCtl = findBinary('pg_ctl');
    findBinary('postgres'); // pg_ctl starts it: name it now if missing
    const user = asRoot ? osUser() : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'nest-lock-pg-'));
    if (user) chownSync(dir, user.uid, user.gid);
    const server = new PostgresServer(await freePort(), dir, pgCtl, password);
    live.add(server);
    try {
      const auth = ['-A', 'trust'];
      if (password !== undefined) {
        const pwfile = join(dir, 'pwfile');
        writeFileSync(pwfile, `${password}\n`);
        if (user) chownSync(pwfile, user.uid, user.gid);
        auth.splice(0, 2, '-A', 'scram-sha-256', `--pwfile=${pwfile}`);
      }
      await run(
        initdb,
        ['-D', server.data, ...auth, '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
        dir,
        60_000,
      );
      appendFileSync(
        join(server.data, 'postgresql.conf'),
        [
          '',
          '# nest-lock tests: a throw-away server',
          `port = ${server.port}`,
          `listen_addresses = '127.0.0.1'`,
          `unix_socket_directories = '${dir}'`,
          'fsync = off',
          'synchronous_commit = off',
          'full_page_writes = off',
          'shared_buffers = 16MB',
          'max_connections = 40',
          '',
        ].join('\n'),
      );
      await server.start();
    } catch (err) {
      await server.cleanup();
      throw err;
    }
    return server;
  }

  /** Starts the server (again, on the same port) and waits until it accepts connections. */
  async start(): Promise<void> {
    await this.pg(['start', '-w', '-t', '30', '-D', this.data, '-l', this.log]);
    this.running = true;
  }

  /** Stops the server and waits until it is gone. `immediate` is a crash: no clean shutdown, recovery on the next start. */
  async stop({ mode = 'fast' }: { mode?: StopMode } = {}): Promise<void> {
    await this.pg(['stop', '-w', '-t', '30', '-D', this.data, '-m', mode]);
    this.running = false;
  }

  /** `pg_ctl restart`: stops (`mode`, default `fast`) and starts again on the same port, waiting for both. */
  async restart({ mode = 'fast' }: { mode?: StopMode } = {}): Promise<void> {
    await this.pg(['restart', '-w', '-t', '30', '-D', this.data, '-l', this.log, '-m', mode]);
    this.running = true;
  }

  /** Stops the server (immediate) if it runs, and removes its dir. */
  async cleanup(): Promise<void> {
    live.delete(this);
    if (this.running) await this.stop({ mode: 'immediate' }).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The same, synchronously (at process exit). @internal */
  cleanupSync(): void {
    live.delete(this);
    try {
      if (this.running)
        execFileSync(...command(this.pgCtl, ['stop', '-w', '-D', this.data, '-m', 'immediate']), {
          cwd: this.dir,
          stdio: 'ignore',
        });
    } catch {
      // already gone
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async pg(args: string[]): Promise<void> {
    try {
      await run(this.pgCtl, args, this.dir);
    } catch (err) {
      const log = existsSync(this.log)
        ? readFileSync(this.log, 'utf8').split('\n').slice(-20).join('\n')
        : '(no server log)';
      throw new Error(`${(err as Error).message}\nserver log (last lines):\n${log}`, { cause: err });
    }
  }
}
