import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { addRatios, type Row } from '../support/results.js';
import { interleave, type BenchContext, type Subject } from '../support/runner.js';

const serverPath = fileURLToPath(new URL('./s5-http.server.js', import.meta.url));
export const HTTP_CONNECTIONS = 10;

/** Which app a route lives in: nest-lock with the in-memory or the Redis provider, or murlock. */
type ServerKind = 'memory' | 'redis' | 'murlock';

interface Server {
  child: ChildProcess;
  port: number;
}

function startServer(provider: ServerKind, redisUrl: string): Promise<Server> {
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

/** The CPU time the server process has used so far, in µs (asked over IPC). */
function serverCpuUs(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the HTTP server did not report its CPU time within 5 s')), 5_000);
    const onMessage = (m: { type?: string; us?: number }): void => {
      if (m.type !== 'cpu') return;
      clearTimeout(timer);
      server.child.off('message', onMessage);
      resolve(m.us!);
    };
    server.child.on('message', onMessage);
    server.child.send({ type: 'cpu' });
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
  provider: ServerKind;
  /** `distinct`: a new lock name per request; `shared`: one name, requests wait. */
  group: 'distinct' | 'shared';
  path: string;
}

const route = (
  id: string,
  label: string,
  kind: Route['kind'],
  retry: Route['retry'],
  provider: ServerKind,
  group: Route['group'],
  path: string,
): Route => ({
  id,
  label,
  kind,
  retry,
  waits: '-',
  provider,
  group,
  path,
});

const ROUTES: Route[] = [
  route('http-plain', 'undecorated route', 'raw', '-', 'memory', 'distinct', 'plain'),
  route('http-distinct-memory', '@Locked (memory)', 'ours', '-', 'memory', 'distinct', 'distinct'),
  route('http-distinct-redis', '@Locked (redis)', 'ours', '-', 'redis', 'distinct', 'distinct'),
  route('http-distinct-murlock', '@MurLock', 'peer', 'tuned', 'murlock', 'distinct', 'murlock/distinct'),
  route('http-shared-memory', "@Locked, onHeld 'wait' (memory)", 'ours', '-', 'memory', 'shared', 'shared'),
  route('http-shared-redis', "@Locked, onHeld 'wait' (redis)", 'ours', '-', 'redis', 'shared', 'shared'),
  route('http-shared-murlock', '@MurLock', 'peer', 'tuned', 'murlock', 'shared', 'murlock/shared'),
];

/**
 * Scenario 5: requests/s of a Nest express app on loopback, measured with
 * autocannon (10 connections): the same handler undecorated, with
 * `@Locked` on a name per request, and with `@Locked` on one shared name
 * with `onHeld: 'wait'`; murlock's `@MurLock` on the same two as the peer.
 * The undecorated route is the baseline ("raw") of both tables.
 */
export async function http(ctx: BenchContext): Promise<Row[]> {
  const servers = new Map<ServerKind, Server | Error>();
  const server = async (provider: ServerKind): Promise<Server> => {
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
    const all = await interleave(ctx, 's5', 'HTTP', 'req/s', ROUTES, ctx.options.longRepeats, async (route) => {
      const s = await server(route.provider);
      const cpuBefore = await serverCpuUs(s);
      const result = await load(s.port, route.path, `r${seq++}`, seconds);
      const cpuUs = (await serverCpuUs(s)) - cpuBefore;
      const failed = result.errors + result.timeouts + result.non2xx;
      if (result['2xx'] === 0) throw new Error(`no 2xx answer (${failed} failures)`);
      return {
        throughput: (result['2xx'] * 1000) / (seconds * 1000),
        p50: result.latency.p50,
        p99: result.latency.p99,
        failed,
        /** The app's CPU time per answered request: what the decorator adds, apart from waiting. */
        cpuUsPerRequest: cpuUs / (result['2xx'] + result.non2xx),
      };
    });
    // Two tables: distinct names, and one shared name; the undecorated route is the baseline of both.
    const rows: Row[] = [];
    for (const group of ['distinct', 'shared'] as const) {
      const variant =
        group === 'distinct'
          ? `a new name per request, ${HTTP_CONNECTIONS} connections`
          : `one shared name, requests wait, ${HTTP_CONNECTIONS} connections`;
      const members = all
        .filter((r) => r.kind === 'raw' || ROUTES.find((x) => x.id === r.id)!.group === group)
        .map((r) => ({ ...r, variant, notes: [...r.notes] }));
      addRatios(members);
      rows.push(...members);
    }
    for (const r of rows) {
      const failed = r.samples.reduce((n, s) => n + (s.failed ?? 0), 0);
      if (failed > 0) r.notes.push(`${failed} requests failed or were not 2xx`);
    }
    return rows;
  } finally {
    for (const s of servers.values()) if (!(s instanceof Error)) await stopServer(s);
  }
}
