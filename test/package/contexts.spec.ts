/**
 * The packed library beyond HTTP (docs/contexts.md), in test/apps/contexts-esm-vitest:
 * one app from the tarball hosting GraphQL (Apollo on Express, Mercurius on
 * Fastify), microservices (TCP and Redis), socket.io and ws gateways,
 * `@OnEvent` and BullMQ workers. Its own Vitest spec, on Node 20, fires
 * concurrent calls at each with the in-memory store and with a store that is
 * down; this Jest spec then boots the same build on Node 24 and checks what
 * a GraphQL caller that lost gets, and that the app logs no stack for it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { packLibrary, type PackedLibrary } from './packed-library.js';
import { childEnv, nodeBinary, prepareApp, RunningApp } from './packed-apps.js';

const APP = 'contexts-esm-vitest';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe(`test/apps/${APP} with the packed library`, () => {
  let packed: PackedLibrary;
  let dir: string;

  beforeAll(() => {
    packed = packLibrary();
    dir = prepareApp(APP, packed);
  }, 900_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (packed) rmSync(dirname(packed.tarball), { recursive: true, force: true });
  });

  test('its Vitest spec passes on Node 20: every context answers the caller that lost in its own convention, with and without a store', () => {
    const run = spawnSync('npm', ['test'], { cwd: dir, env: childEnv(), encoding: 'utf8', timeout: 400_000 });
    const output = `${run.stdout}\n${run.stderr}`;
    if (run.status !== 0) throw new Error(`npm test of ${APP} failed:\n${output}`);
    expect(output).toMatch(/30 passed/);
  }, 420_000);

  test('on Node 24, four concurrent GraphQL queries on Apollo: one report, three CONFLICT errors naming the lock, ping resolves; no stack in the log', async () => {
    const node = nodeBinary('24');
    const env = {
      ...childEnv(node),
      NO_COLOR: '1',
      TCP_PORT: String(await freePort()),
      RUN_ID: `jest${randomBytes(4).toString('hex')}`,
    };
    const app = new RunningApp(spawn(node, ['dist/main.js'], { cwd: dir, env }));
    try {
      await app.waitFor('Ready:', 60_000);
      const url = /Ready: apollo (\S+)/.exec(app.stdout)![1];
      const answers = await Promise.all(
        [1, 2, 3, 4].map(async () => {
          const res = await fetch(`${url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ report ping }' }),
          });
          return (await res.json()) as {
            data: { report: string | null; ping: string };
            errors?: Array<{ message: string; extensions: Record<string, unknown> }>;
          };
        }),
      );
      expect(answers.map((a) => a.data.report).sort()).toEqual(['done', null, null, null]);
      for (const answer of answers.filter((a) => a.data.report === null)) {
        expect(answer.data.ping).toBe('pong');
        expect(answer.errors).toEqual([
          expect.objectContaining({
            message: expect.stringContaining('Lock "gql-report" is held by another caller'),
            extensions: { code: 'CONFLICT', status: 409, lock: 'gql-report' },
          }),
        ]);
      }
    } finally {
      await app.stop();
    }
    expect(`${app.stdout}${app.stderr}`).not.toMatch(/ERROR|^\s+at /m);
  }, 300_000);
});
