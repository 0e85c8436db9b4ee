import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { Redis } from 'ioredis';
import { now, sleep } from './stats.js';

/** A free loopback TCP port (asked from the OS). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The bench's own redis-server, on a free loopback port, without persistence,
 * so that `INFO stats` counts only the commands of the bench.
 */
export class BenchRedis {
  private constructor(
    readonly port: number,
    readonly version: string,
    private readonly child: ChildProcess,
    readonly admin: Redis,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<BenchRedis> {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (err) => reject(new Error(`could not start redis-server: ${err.message}`)));
      child.once('exit', (code) => reject(new Error(`redis-server exited with code ${String(code)}`)));
    });
    const admin = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 50,
    });
    admin.on('error', () => {}); // refused connections while the server starts; failures surface from the calls
    const deadline = now() + 10_000;
    for (;;) {
      try {
        await Promise.race([admin.connect(), failed]);
        break;
      } catch (err) {
        if (now() > deadline || child.exitCode !== null) {
          child.kill();
          throw err;
        }
        admin.disconnect();
        await sleep(50);
      }
    }
    failed.catch(() => {});
    const info = await admin.info('server');
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    return new BenchRedis(port, version, child, admin);
  }

  /** `total_commands_processed` from `INFO stats`. The INFO call itself counts one. */
  async commandsProcessed(): Promise<number> {
    const info = await this.admin.info('stats');
    return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
  }

  /** CPU seconds the server has used (user + system, from `INFO cpu`). */
  async cpuSeconds(): Promise<number> {
    const info = await this.admin.info('cpu');
    const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
    return field('used_cpu_sys') + field('used_cpu_user');
  }

  /** Calls per command from `INFO commandstats` (commands run inside scripts count too). */
  async commandStats(): Promise<Map<string, number>> {
    const info = await this.admin.info('commandstats');
    const stats = new Map<string, number>();
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) stats.set(m[1]!, Number(m[2]));
    return stats;
  }

  /**
   * Runs `during` with a MONITOR connection open and counts the commands sent
   * by clients and those run inside Lua scripts (MONITOR shows them as
   * `lua`). MONITOR slows the server down, so use it outside measured windows.
   */
  async countCommands<T>(during: () => Promise<T>): Promise<{ result: T; client: number; lua: number }> {
    // A plain socket rather than ioredis' monitor mode, which trips over RESP3 HELLOs of clients connecting meanwhile.
    const socket = connect(this.port, '127.0.0.1');
    let client = 0;
    let lua = 0;
    let buffered = '';
    let started!: () => void;
    const ok = new Promise<void>((resolve) => (started = resolve));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\r\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '+OK') started();
        else if (/^\+\d+\.\d+ \[\d+ lua\]/.test(line)) lua++;
        else if (/^\+\d+\.\d+ \[/.test(line)) client++;
      }
    });
    socket.on('error', () => started());
    socket.write('MONITOR\r\n');
    await Promise.race([ok, sleep(2_000)]);
    try {
      const result = await during();
      await sleep(50); // let the last MONITOR lines arrive
      return { result, client, lua };
    } finally {
      socket.destroy();
    }
  }

  async stop(): Promise<void> {
    this.admin.disconnect();
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await Promise.race([exited, sleep(3_000)]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/**
 * A replica of the Redis at `masterUrl`, on a free loopback port, in sync
 * when this resolves (the master is set to sync at once); `stop()` kills it.
 */
export async function startReplica(masterUrl: string): Promise<{ stop(): Promise<void> }> {
  const master = new Redis(masterUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await master.connect();
  const { port: masterPort } = new URL(masterUrl);
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--replicaof',
      '127.0.0.1',
      masterPort || '6379',
      '--repl-diskless-load',
      'on-empty-db',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const stop = async (): Promise<void> => {
    master.disconnect();
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  };
  try {
    await master.config('SET', 'repl-diskless-sync-delay', '0');
    const online = new RegExp(`slave\\d+:ip=127\\.0\\.0\\.1,port=${port},state=online`);
    const deadline = now() + 10_000;
    while (!online.test(await master.info('replication'))) {
      if (now() > deadline || child.exitCode !== null)
        throw new Error(`the replica on port ${port} did not come in sync within 10 s`);
      await sleep(50);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
