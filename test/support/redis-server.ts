/**
 * Test helpers: start throw-away `redis-server` processes (standalone, a
 * replica, Sentinels, or a 3-master Cluster) on free ports.
 * A missing binary fails the test with a message that names it.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { sleep } from './sleep.js';

function missing(binary: string, why: string): Error {
  return new Error(
    `'${binary}' was not found on PATH: ${why}. Install Redis (redis-server and redis-cli) to run these tests.`,
  );
}

/** A redis-server process of our own, on a free port, without persistence. */
export class RedisServer {
  private proc: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly extra: string[],
    /** A Sentinel's config file (Sentinel rewrites it); `undefined` for a data node. */
    private readonly sentinelConfig?: string,
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

  /**
   * A replica of `master` (`--replicaof`), started and in sync. Give the
   * master `REPLICATION_FAST` so that the first sync starts at once.
   */
  static async startReplica(master: RedisServer): Promise<RedisServer> {
    // (loading the master's data from the socket: nothing is written to disk)
    const replica = await RedisServer.start([
      '--replicaof',
      '127.0.0.1',
      String(master.port),
      '--repl-diskless-load',
      'on-empty-db',
      ...REPLICATION_FAST,
    ]);
    await replica.until((info) => info.includes('master_link_status:up'), 'info', 'replication');
    await master.until(
      (info) => new RegExp(`slave\\d+:ip=127\\.0\\.0\\.1,port=${replica.port},state=online`).test(info),
      'info',
      'replication',
    );
    return replica;
  }

  /**
   * A Sentinel that monitors `master` as `name` (quorum 2; a master is down
   * after 1 s without answer). Three of them make a deployment.
   */
  static async startSentinel(name: string, master: RedisServer, dir: string): Promise<RedisServer> {
    const port = await freePort();
    const config = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      config,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 4000`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    );
    const sentinel = new RedisServer(port, [], config);
    await sentinel.launch();
    return sentinel;
  }

  /** Runs a command through redis-cli against this server; its output. */
  command(...args: Array<string | number>): Promise<string> {
    return cli(['-p', String(this.port), ...args.map(String)]);
  }

  /** Polls `command(...args)` until `check` accepts its output (at most 20 s). */
  async until(check: (output: string) => boolean, ...args: Array<string | number>): Promise<string> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const out = await this.command(...args).catch((err: Error) => err.message);
      if (check(out)) return out;
      if (Date.now() > deadline)
        throw new Error(
          `redis ${this.port}: "${args.join(' ')}" did not reach the expected state within 20 s:\n${out}`,
        );
      await sleep(100);
    }
  }

  /** Starts (again) on the same port. */
  async launch(): Promise<void> {
    const args = this.sentinelConfig
      ? [this.sentinelConfig, '--sentinel']
      : ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.extra];
    const ready = this.sentinelConfig ? '+monitor master' : 'Ready to accept connections';
    const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`redis-server on port ${this.port} did not start within 10 s:\n${out}`)),
        10_000,
      );
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
        if (out.includes(ready)) {
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
    // Node does not always report the exit of a child that was stopped and continued (SIGSTOP/SIGCONT) before:
    // the process table is the truth (gone, or a zombie once killed).
    await Promise.race([exited, processGone(proc.pid!)]);
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

/** Options of a master whose replicas must sync at once (diskless, no delay). */
export const REPLICATION_FAST = ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'];

/** A master, one replica, and three Sentinels that monitor them as `name`, each on a free port. */
export class RedisSentinelSetup {
  private constructor(
    readonly name: string,
    readonly master: RedisServer,
    readonly replica: RedisServer,
    readonly sentinels: RedisServer[],
    private readonly dir: string,
  ) {}

  /** The `sentinels` list of ioredis options. */
  get sentinelNodes(): Array<{ host: string; port: number }> {
    return this.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port }));
  }

  static async start(name = 'locks'): Promise<RedisSentinelSetup> {
    const dir = mkdtempSync(join(tmpdir(), 'nest-lock-sentinel-'));
    const started: RedisServer[] = [];
    try {
      // A master demoted by a failover loads the new master's data through a file: in `dir`, not the working directory.
      const master = await RedisServer.start([...REPLICATION_FAST, '--dir', dir]);
      started.push(master);
      const replica = await RedisServer.startReplica(master);
      started.push(replica);
      const sentinels: RedisServer[] = [];
      for (let i = 0; i < 3; i++) {
        const sentinel = await RedisServer.startSentinel(name, master, dir);
        started.push(sentinel);
        sentinels.push(sentinel);
      }
      // Every Sentinel knows the replica and the two other Sentinels: ready to fail over.
      for (const sentinel of sentinels) {
        await sentinel.until(
          (out) =>
            /num-other-sentinels\s+2\b/.test(out.replace(/\n/g, ' ')) &&
            /num-slaves\s+1\b/.test(out.replace(/\n/g, ' ')),
          'sentinel',
          'master',
          name,
        );
      }
      return new RedisSentinelSetup(name, master, replica, sentinels, dir);
    } catch (err) {
      await Promise.all(started.map((s) => s.stop()));
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The port of the master as the Sentinels see it now. */
  async masterPort(): Promise<number> {
    const out = await this.sentinels[0].command('sentinel', 'get-master-addr-by-name', this.name);
    return Number(out.trim().split('\n')[1]);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, this.replica, this.master].map((s) => s.stop()));
    rmSync(this.dir, { recursive: true, force: true });
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
            [
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              join(dir, `nodes-${port}.conf`),
              '--dir',
              dir,
              '--cluster-node-timeout',
              '2000',
            ],
            port,
          ),
        );
      }
      await cli([
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
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
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT')
        return reject(missing('redis-cli', 'the Cluster tests create clusters with it'));
      if (err) return reject(new Error(`redis-cli ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      resolve(stdout);
    });
  });
}

/** Resolves once `pid` has ended (no longer in the process table, or a zombie), looking every 50 ms. */
async function processGone(pid: number): Promise<void> {
  for (;;) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    } catch {
      return;
    }
    if (state === 'Z' || state === 'X') return;
    await sleep(50);
  }
}
