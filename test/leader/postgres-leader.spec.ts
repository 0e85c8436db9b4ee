/**
 * Leader election across processes on a PostgreSQL server of the test's own
 * (so that it can be stopped and started): replicas are Nest apps with a
 * `@Leader` method that ticks while it leads (see fixtures/leader-worker.ts),
 * and the interval checker asserts that no two terms ever overlap.
 */
import { PostgresServer } from '../support/postgres-server.js';
import { leaderProcessScenarios } from './leader-scenarios.js';
import { Replicas, type WorkerSettings } from './replicas.js';
import { sleep } from '../support/sleep.js';

const ttl = 2_000;
let server: PostgresServer;
let replicas: Replicas | undefined;
let tables = 0;

beforeAll(async () => {
  server = await PostgresServer.create();
}, 60_000);
afterAll(async () => {
  await server?.cleanup();
}, 30_000);
afterEach(async () => {
  await replicas?.stop();
  replicas = undefined;
});

async function cluster(name: string, n: number): Promise<Replicas> {
  const settings: WorkerSettings = {
    store: 'postgres',
    url: server.url,
    table: `leader_${++tables}`,
    name,
    ttl,
    retryDelay: 300,
    commandTimeout: 1_000,
  };
  replicas = new Replicas(settings);
  await replicas.start(n);
  return replicas;
}

leaderProcessScenarios(cluster, ttl);

test('PostgreSQL stopped, then started again: the leader aborts its signal before its lease ends locally; leadership comes back without restarting a replica', async () => {
  const c = await cluster('restart', 2);
  const first = await c.elected(0, 10_000);
  await sleep(500);
  const stoppedAt = Date.now();
  await server.stop({ mode: 'fast' });
  const lost = await c.first(
    '"lost" from the leader',
    (e) => e.kind === 'lost' && e.replica === first.replica && e.token === first.token,
    ttl + 3_000,
  );
  expect(lost.at).toBeLessThan(lost.leaseEnd!);
  expect(lost.at - stoppedAt).toBeLessThan(ttl);
  await sleep(Math.max(0, stoppedAt + ttl + 1_000 - Date.now()));
  await server.start();
  const next = await c.elected(lost.at, 20_000);
  expect(next.token).toBeGreaterThan(first.token);
  await sleep(1_000);
  for (const r of c.replicas)
    expect({ replica: r.id, alive: r.alive, stderr: r.alive ? '' : r.stderr }).toEqual({
      replica: r.id,
      alive: true,
      stderr: '',
    });
  c.expectNoOverlap();
}, 60_000);
