/**
 * Test helpers: start throw-away `redis-server` processes (standalone or a
 * 3-master Cluster) on free ports, and spawn compiled child fixtures.
 * A missing binary fails the test with a message that names it.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A port nobody listens on (and, with `bus`, port + 10000 too, for Cluster). */
export async function freePort(bus = false): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = bus ? 20_000 + Math.floor(Math.random() * 20_000) : 0;
    try {
      const got = await listenOnce(port);
      if (bus) await listenOnce(got + 10_000);
      return got;
    } catch {
      // taken; try another
    }
  }
  throw new Error('no free port found');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const { port: got } = srv.address() as { port: number };
      srv.close(() => resolve(got));
    });
  });
}

function missing(binary: string, why: string): Error {
  return new Error(`'${binary}' was not found on PATH: ${why}. Install Redis (redis-server and redis-cli) to run these tests.`);
}

/** A redis-server process of our own, on a free port, without persistence. */
export class RedisServer {
  private proc: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly extra: string[],
  ) {}

  /** `redis://127.0.0.1:<port>` */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.proc!.pid!;
  }

  static async start(extra: string[] = [], port?: number): Promise<RedisServer> {
    const server = new RedisServer(port ?? (await freePort()), extra);
    await server.launch();
    return server;
  }

  /** Starts (again) on the same port. */
  async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.extra];
    const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server on port ${this.port} did not start within 10 s:\n${out}`)), 10_000);
      proc.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(err.code === 'ENOENT' ? missing('redis-server', 'the Redis tests start their own servers') : err);
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server on port ${this.port} exited with ${code}:\n${out}`));
      });
      proc.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          proc.removeAllListeners('exit');
          resolve();
        }
      });
    });
  }

  /** SIGKILL, and wait for the process to be gone. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGCONT');
    proc.kill('SIGKILL');
    await exited;
  }

  pause(): void {
    this.proc!.kill('SIGSTOP');
  }

  resume(): void {
    this.proc!.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    await this.kill();
  }
}

/** A local Redis Cluster of three masters, no replicas. */
export class RedisCluster {
  private constructor(
    readonly nodes: RedisServer[],
    private readonly dir: string,
  ) {}

  get startupNodes(): Array<{ host: string; port: number }> {
    return this.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
  }

  static async start(): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'nest-lock-cluster-'));
    const nodes: RedisServer[] = [];
    const cluster = new RedisCluster(nodes, dir);
    try {
      for (let i = 0; i < 3; i++) {
        const port = await freePort(true);
        nodes.push(
          await RedisServer.start(
            ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, '--cluster-node-timeout', '2000'],
            port,
          ),
        );
      }
      await cli(['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
      const deadline = Date.now() + 20_000;
      for (const node of nodes) {
        while (!(await cli(['-p', String(node.port), 'cluster', 'info'])).includes('cluster_state:ok')) {
          if (Date.now() > deadline) throw new Error(`cluster node ${node.port} did not reach cluster_state:ok`);
          await sleep(100);
        }
      }
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function cli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', args, { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return reject(missing('redis-cli', 'the Cluster tests create clusters with it'));
      if (err) return reject(new Error(`redis-cli ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      resolve(stdout);
    });
  });
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Spawns a fixture from `test/redis/fixtures/` as its compiled
 * `dist/test/redis/fixtures/<name>.js` (built by `npm test`).
 */
export function spawnFixture(name: string, args: unknown): ChildProcess {
  const root = join(here, '..', '..').replace(/[\\/]dist$/, '');
  const script = join(root, 'dist', 'test', 'redis', 'fixtures', `${name}.js`);
  return spawn(process.execPath, [script, JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'inherit'] });
}

/** The stdout lines of a child, read once, awaited by prefix. */
export class ChildLines {
  private readonly lines: string[] = [];
  private readonly waiting = new Set<() => void>();
  private exited: number | null | undefined;

  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      for (const wake of this.waiting) wake();
    });
    child.once('exit', (code) => {
      this.exited = code;
      for (const wake of this.waiting) wake();
    });
  }

  /** The rest of the first unread line that starts with `prefix`. */
  next(prefix: string, timeoutMs = 20_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no "${prefix}" line from the child within ${timeoutMs} ms`)), timeoutMs);
      const finish = (err?: Error, line?: string) => {
        clearTimeout(timer);
        this.waiting.delete(look);
        if (err) reject(err);
        else resolve(line!);
      };
      const look = () => {
        const i = this.lines.findIndex((l) => l.startsWith(prefix));
        if (i >= 0) return finish(undefined, this.lines.splice(i, 1)[0].slice(prefix.length).trim());
        if (this.exited !== undefined) finish(new Error(`the child exited (${this.exited}) before printing "${prefix}"`));
      };
      this.waiting.add(look);
      look();
    });
  }
}
