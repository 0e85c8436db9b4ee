/**
 * Leader election across processes on a Redis of the test's own (so that it
 * can be paused and restarted): replicas are Nest apps with a `@Leader`
 * method that ticks while it leads (see fixtures/leader-worker.ts), and the
 * interval checker asserts that no two terms ever overlap.
 */
import { RedisServer } from '../support/redis-server.js';
import { leaderProcessScenarios } from './leader-scenarios.js';
import { Replicas, type WorkerSettings } from './replicas.js';
import { sleep } from '../support/sleep.js';

const ttl = 2_000;
let redis: RedisServer;
let replicas: Replicas | undefined;

beforeAll(async () => {
  redis = await RedisServer.start();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});
afterEach(async () => {
  await replicas?.stop();
  replicas = undefined;
  redis.resume();
});

async function cluster(name: string, n: number, lease = ttl): Promise<Replicas> {
  const settings: WorkerSettings = {
    store: 'redis',
    url: redis.url,
    name,
    ttl: lease,
    retryDelay: 300,
    commandTimeout: 1_000,
  };
  replicas = new Replicas(settings);
  await replicas.start(n);
  return replicas;
}

leaderProcessScenarios(cluster, ttl);

test('Redis unreachable (paused): the leader aborts its signal before its lease ends locally; leadership comes back after', async () => {
  const c = await cluster('unreachable', 2);
  const first = await c.elected(0, 10_000);
  await sleep(500);
  const pausedAt = Date.now();
  redis.pause();
  const lost = await c.first(
    '"lost" from the leader',
    (e) => e.kind === 'lost' && e.replica === first.replica && e.token === first.token,
    ttl + 3_000,
  );
  expect(lost.at).toBeLessThan(lost.leaseEnd!);
  expect(lost.at - pausedAt).toBeLessThan(ttl);
  await sleep(Math.max(0, pausedAt + ttl + 1_000 - Date.now()));
  redis.resume();
  const next = await c.elected(lost.at, 15_000);
  expect(next.token).toBeGreaterThan(first.token);
  await sleep(500);
  c.expectNoOverlap();
}, 40_000);

test('Redis restarted (its locks forgotten): leadership comes back without restarting a replica, and no two replicas run at once', async () => {
  // A long lease (renewed every 2 s) leaves a wide gap between the restart and the leader's next renewal,
  // in which the other replicas' re-checks find the restarted Redis empty.
  const c = await cluster('restart', 4, 6_000);
  const first = await c.elected(0, 10_000);
  await sleep(500);
  const killedAt = Date.now();
  await redis.kill();
  await sleep(300);
  await redis.launch();
  const next = await c.elected(killedAt, 15_000);
  expect(next.token).toBeGreaterThan(first.token);
  await sleep(1_000);
  for (const r of c.replicas)
    expect({ replica: r.id, alive: r.alive, stderr: r.alive ? '' : r.stderr }).toEqual({
      replica: r.id,
      alive: true,
      stderr: '',
    });
  c.expectNoOverlap();
}, 40_000);
