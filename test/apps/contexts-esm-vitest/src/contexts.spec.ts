/**
 * The built app (dist/main.js, with nest-lock from the packed tarball) as a
 * client sees it: two concurrent calls of each locked handler, once with the
 * in-memory store and once with a Redis lock store where nothing listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { io, type Socket } from 'socket.io-client';
import { WebSocket } from 'ws';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

class App {
  output = '';
  urls = { apollo: '', mercurius: '', ws: '' };
  private child!: ChildProcess;

  async start(env: Record<string, string>): Promise<void> {
    this.child = spawn(process.execPath, ['dist/main.js'], { env: { ...process.env, NO_COLOR: '1', ...env } });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.output += d));
    const end = Date.now() + 60_000;
    let ready: RegExpExecArray | null = null;
    while (!(ready = /Ready: apollo (\S+) mercurius (\S+) ws (\S+)/.exec(this.output))) {
      if (Date.now() > end || this.child.exitCode !== null) throw new Error(`the app did not start:\n${this.output}`);
      await sleep(50);
    }
    this.urls = { apollo: ready[1], mercurius: ready[2], ws: ready[3].replace(/^http/, 'ws') };
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const gone = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await gone;
  }
}

async function graphql(url: string): Promise<{ data: { report: string | null; ping: string }; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> }> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ report ping }' }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

const modes = [
  { store: 'the in-memory store', down: false },
  { store: 'a Redis lock store where nothing listens', down: true },
];

describe.each(modes)('with $store', ({ down }) => {
  const app = new App();
  const runId = `ctx${process.pid}${down ? 'd' : 'm'}`;
  let tcpPort = 0;
  /** What the losing caller gets: a held lock (409) or a failed store (503), naming the lock, without the store's address. */
  const lost = (lock: string) => ({
    status: down ? 503 : 409,
    error: down ? 'Service Unavailable' : 'Conflict',
    lock,
    message: down ? `The lock store is unavailable, so lock "${lock}" could not be taken. Retry later.` : expect.stringContaining(`Lock "${lock}" is held`),
  });
  const winners = down ? 0 : 1;

  beforeAll(async () => {
    tcpPort = await freePort();
    const env: Record<string, string> = { TCP_PORT: String(tcpPort), RUN_ID: runId };
    if (down) env.LOCK_REDIS_URL = `redis://127.0.0.1:${await freePort()}`;
    await app.start(env);
  }, 90_000);
  afterAll(() => app.stop());

  test.each(['apollo', 'mercurius'] as const)('GraphQL (%s): the other caller gets an error with extensions { code, status, lock }; ping still resolves', async (driver) => {
    const answers = await Promise.all([graphql(app.urls[driver]), graphql(app.urls[driver])]);
    expect(answers.filter((a) => a.data.report === 'done')).toHaveLength(winners);
    const failed = answers.filter((a) => a.data.report === null);
    expect(failed).toHaveLength(2 - winners);
    for (const answer of failed) {
      expect(answer.data.ping).toBe('pong');
      expect(answer.errors).toHaveLength(1);
      const { message, extensions } = answer.errors![0];
      const { status, lock, message: text } = lost('gql-report');
      expect(message).toEqual(text);
      expect(extensions).toMatchObject({ code: down ? 'SERVICE_UNAVAILABLE' : 'CONFLICT', status, lock });
      // No stack frames, no paths, no store address.
      expect(JSON.stringify(answer)).not.toMatch(/ at |dist\/|node_modules|127\.0\.0\.1/);
    }
  });

  test.each([
    ['apollo', 'tenantReport', 'tenant:'],
    ['mercurius', 'tenantReport', 'tenant:'],
    ['apollo', 'tenantReportByContext', 'ctx-tenant:'],
    ['mercurius', 'tenantReportByContext', 'ctx-tenant:'],
  ] as const)('GraphQL (%s): a lock named from the context (a tenant header, %s) conflicts for one tenant only', async (driver, field, prefix) => {
    const query = (tenant: string) =>
      fetch(`${app.urls[driver]}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tenant': tenant },
        body: JSON.stringify({ query: `{ ${field} }` }),
      }).then((res) => res.json() as Promise<{ data: Record<string, string | null>; errors?: Array<{ extensions: { lock: string } }> }>);
    const [a1, a2, b] = await Promise.all([query('a'), query('a'), query('b')]);
    if (down) {
      expect([a1, a2, b].map((r) => r.errors![0].extensions.lock)).toEqual([`${prefix}a`, `${prefix}a`, `${prefix}b`]);
      return;
    }
    expect([a1.data[field], a2.data[field]].sort()).toEqual(['a', null]);
    expect([a1, a2].find((r) => r.data[field] === null)!.errors![0].extensions).toMatchObject({ code: 'CONFLICT', lock: `${prefix}a` });
    expect(b).toEqual({ data: { [field]: 'b' } });
  });

  describe.each([
    ['TCP', () => ({ transport: Transport.TCP, options: { host: '127.0.0.1', port: tcpPort } })],
    ['Redis', () => ({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } })],
  ] as const)('microservice over %s', (_transport, options) => {
    let client: ClientProxy;
    beforeAll(async () => {
      client = ClientProxyFactory.create(options() as never);
      await client.connect();
    });
    afterAll(() => client.close());

    test("@MessagePattern: the other caller's observable errors with { status, error, message, lock }, no hang", async () => {
      const calls = [1, 2].map(() => firstValueFrom(client.send(`${runId}.report`, {})).then((value) => ({ value }), (error: unknown) => ({ error })));
      const answers = await Promise.all(calls);
      expect(answers.filter((a) => 'value' in a)).toEqual(Array(winners).fill({ value: { done: true } }));
      const errors = answers.filter((a) => 'error' in a).map((a) => (a as { error: unknown }).error);
      expect(errors).toEqual(Array(2 - winners).fill(lost('rpc-report')));
    });
  });

  test('@EventPattern (Redis): an event delivered twice at once runs once; a held lock skips it without an ERROR', async () => {
    const client = ClientProxyFactory.create({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: 6379 } });
    try {
      await client.connect();
      await Promise.all([firstValueFrom(client.emit(`${runId}.audit`, {})), firstValueFrom(client.emit(`${runId}.audit`, {}))]);
      await sleep(1_500);
      expect(await firstValueFrom(client.send(`${runId}.audits`, {}))).toBe(winners);
    } finally {
      await client.close();
    }
  });

  test("WebSocket (socket.io, gateway with @UseFilters): the other caller's ack and an exception event carry { status, error, message, lock }", async () => {
    const sockets: Socket[] = [1, 2].map(() => io(app.urls.apollo, { transports: ['websocket'] }));
    try {
      const exceptions: unknown[] = [];
      for (const s of sockets) s.on('exception', (e: unknown) => exceptions.push(e));
      await Promise.all(sockets.map((s) => new Promise((r) => s.once('connect', r))));
      const acks = await Promise.all(sockets.map((s) => s.timeout(5_000).emitWithAck('report', {})));
      expect(acks.filter((a) => (a as { done?: boolean }).done === true)).toHaveLength(winners);
      expect(acks.filter((a) => (a as { done?: boolean }).done === undefined)).toEqual(Array(2 - winners).fill(lost('ws-report')));
      expect(exceptions).toEqual(Array(2 - winners).fill(lost('ws-report')));
    } finally {
      for (const s of sockets) s.disconnect();
    }
  });

  test("WebSocket (ws adapter): the other caller gets the message { event: 'exception', data: { status, error, message, lock } }", async () => {
    const sockets = [1, 2].map(() => new WebSocket(app.urls.ws));
    try {
      await Promise.all(sockets.map((s) => new Promise((r, j) => s.once('open', r).once('error', j))));
      const answers = await Promise.all(
        sockets.map((s) => {
          const answer = new Promise((r) => s.once('message', (m) => r(JSON.parse(String(m)))));
          s.send(JSON.stringify({ event: 'report', data: {} }));
          return answer;
        }),
      );
      const exceptions = answers.filter((a) => (a as { event?: string }).event === 'exception');
      expect(exceptions).toEqual(Array(2 - winners).fill({ event: 'exception', data: lost('ws-report') }));
      expect(answers.filter((a) => (a as { done?: boolean }).done === true)).toHaveLength(winners);
    } finally {
      for (const s of sockets) s.close();
    }
  });

  test('@OnEvent: three events at once run once (the others are skipped, not logged as errors)', async () => {
    expect((await fetch(`${app.urls.apollo}/events/fire`, { method: 'POST' })).status).toBe(202);
    await sleep(1_500);
    expect(await (await fetch(`${app.urls.apollo}/events/runs`)).json()).toEqual({ runs: winners });
  });

  test.each([
    ['jobDelay', 'delay', 3, 'a held one is moved back to delayed, not failed'],
    ["onHeld: 'wait'", 'wait', 2, 'a held one waits for the lock in its worker slot'],
  ] as const)('BullMQ (%s, queue %s): %i jobs of one account run one at a time; %s', async (_option, kind, count) => {
    const url = `${app.urls.apollo}/jobs/${kind}`;
    expect((await fetch(`${url}?count=${count}`, { method: 'POST' })).status).toBe(201);
    type Stats = { runs: number; maxInside: number; states: string[]; failed: string[] };
    let stats: Stats = { runs: 0, maxInside: 0, states: [], failed: [] };
    const settled = (s: Stats) => s.states.length === count && s.states.every((state) => state === 'completed' || state === 'failed');
    for (const end = Date.now() + 30_000; Date.now() < end && !settled(stats); await sleep(200)) stats = (await (await fetch(url)).json()) as Stats;
    try {
      if (down) {
        // A failed store is not a held lock: the attempt fails (BullMQ's attempts and backoff decide what comes next).
        expect(stats.states).toEqual(Array(count).fill('failed'));
        expect(stats.runs).toBe(0);
        for (const reason of stats.failed) expect(reason).toMatch(/Lock store failed during acquire of lock "(waiting:)?account:a"/);
      } else {
        expect(stats.states).toEqual(Array(count).fill('completed'));
        expect(stats).toMatchObject({ runs: count, maxInside: 1, failed: [] });
      }
    } finally {
      await fetch(`${url}/obliterate`, { method: 'POST' });
    }
  }, 40_000);

  test('the log: no stack trace; a held lock is no ERROR; a failed store is logged without its stack, once per cause', () => {
    expect(app.output).not.toMatch(/^\s+at /m);
    const errors = app.output.split('\n').filter((line) => /\bERROR\b/.test(line));
    if (!down) expect(errors).toEqual([]);
    else for (const line of errors) expect(line).toMatch(/Lock store failed for event handler "(rpc|event)-audit"; skipped this event/);
    if (down) expect(app.output).toMatch(/WARN .*Answered 503: Lock store failed during acquire of lock/);
  });
});
