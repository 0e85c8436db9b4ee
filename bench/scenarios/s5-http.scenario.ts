import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext, type Subject } from '../support/runner.js';

const serverPath = fileURLToPath(new URL('./s5-http.server.js', import.meta.url));
export const HTTP_CONNECTIONS = 10;

interface Server {
  child: ChildProcess;
  port: number;
}

function startServer(provider: 'memory' | 'redis', redisUrl: string): Promise<Server> {
  const child = fork(serverPath, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_PROVIDER: provider, BENCH_REDIS_URL: redisUrl, NODE_ENV: 'benchmark' },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${provider} HTTP server did not start within 20 s`));
    }, 20_000);
    child.once('message', (m: { port: number }) => {
      clearTimeout(timer);
      resolve({ child, port: m.port });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${provider} HTTP server exited with code ${String(code)}`));
    });
  });
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  server.child.send({ type: 'exit' });
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** `seconds` of autocannon on `/<path>/<base>-<n>`, a new `n` per request (so a new lock name on `distinct`). */
function load(port: number, path: string, base: string, seconds: number): Promise<autocannon.AutocannonResult> {
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: HTTP_CONNECTIONS,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/${path}/${base}-${n++}` }) }],
  });
}

interface Route extends Subject {
  provider: 'memory' | 'redis';
  path: string;
}

const ROUTES: Route[] = [
  { id: 'http-plain', label: 'undecorated route', kind: 'raw', retry: '-', waits: '-', provider: 'memory', path: 'plain' },
  { id: 'http-distinct-memory', label: '@Locked, distinct names (memory)', kind: 'ours', retry: '-', waits: '-', provider: 'memory', path: 'distinct' },
  { id: 'http-distinct-redis', label: '@Locked, distinct names (redis)', kind: 'ours', retry: '-', waits: '-', provider: 'redis', path: 'distinct' },
  { id: 'http-shared-memory', label: "@Locked, 1 name, onHeld 'wait' (memory)", kind: 'ours', retry: '-', waits: '-', provider: 'memory', path: 'shared' },
  { id: 'http-shared-redis', label: "@Locked, 1 name, onHeld 'wait' (redis)", kind: 'ours', retry: '-', waits: '-', provider: 'redis', path: 'shared' },
];

/**
 * Scenario 5: requests/s of a Nest express app on loopback, measured with
 * autocannon (10 connections): the same handler undecorated, with
 * `@Locked` on a name per request, and with `@Locked` on one shared name
 * with `onHeld: 'wait'`. The undecorated route is the baseline ("raw").
 */
export async function http(ctx: BenchContext): Promise<Row[]> {
  const servers = new Map<'memory' | 'redis', Server | Error>();
  const server = async (provider: 'memory' | 'redis'): Promise<Server> => {
    if (!servers.has(provider)) {
      const started = await startServer(provider, ctx.env.redisUrl).then(
        async (s) => {
          // The JIT needs seconds of traffic before a route runs at speed: warm every route of this server up front.
          for (const route of ROUTES.filter((r) => r.provider === provider)) {
            await load(s.port, route.path, `warm`, warmupSeconds);
          }
          return s;
        },
        (err: Error) => err,
      );
      servers.set(provider, started);
    }
    const s = servers.get(provider)!;
    if (s instanceof Error) throw s;
    return s;
  };
  const seconds = Math.max(1, Math.round(ctx.options.longRunMs / 1000));
  const warmupSeconds = ctx.options.quick ? 1 : 2;
  try {
    let seq = 0;
    const rows = await interleave(ctx, 's5', `HTTP, ${HTTP_CONNECTIONS} connections`, 'req/s', ROUTES, ctx.options.longRepeats, async (route) => {
      const { port } = await server(route.provider);
      const result = await load(port, route.path, `r${seq++}`, seconds);
      const failed = result.errors + result.timeouts + result.non2xx;
      if (result['2xx'] === 0) throw new Error(`no 2xx answer (${failed} failures)`);
      return {
        throughput: (result['2xx'] * 1000) / (seconds * 1000),
        p50: result.latency.p50,
        p99: result.latency.p99,
        failed,
      };
    });
    addRatios(rows);
    for (const r of rows) {
      const failed = r.samples.reduce((n, s) => n + (s.failed ?? 0), 0);
      if (failed > 0) r.notes.push(`${failed} requests failed or were not 2xx`);
    }
    return rows;
  } finally {
    for (const s of servers.values()) if (!(s instanceof Error)) await stopServer(s);
  }
}
