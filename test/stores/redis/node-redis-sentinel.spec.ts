/**
 * The Redis store on a node-redis Sentinel client (`createSentinel()`),
 * against a master, a replica and three Sentinels that this file starts on
 * free ports: a lock cycle and a wake-up through its pub/sub connection, the
 * conformance suite, and a failover (`SENTINEL FAILOVER`) after which locks
 * work again, waiters are still woken, and fencing tokens keep rising. The
 * client the app passed stays open.
 */
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { Redis } from 'ioredis';
import { createSentinel } from 'redis';
import { describeLockProviderConformance, type PausedHolderProcess } from 'nest-lock/testing';
import { pausedHolderOn } from '../../contract/paused-holder-process.js';
import { LockManager, type LockHandle } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { tokenOf } from '../../support/fencing.js';
import { redisClientsTarget } from '../../support/redis-conformance-target.js';
import { RedisSentinelSetup } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

const COMMAND_TIMEOUT = 1_000;
let setup: RedisSentinelSetup;

/** A node-redis Sentinel client of the set-up (not connected: the store opens it), reporting its errors to nobody. */
function sentinelClient() {
  const client = createSentinel({ name: setup.name, sentinelRootNodes: setup.sentinelNodes });
  client.on('error', () => {});
  return client;
}

/** An ioredis client of the master the Sentinels name (for inspection). */
function inspector(): Redis {
  return new Redis({ sentinels: setup.sentinelNodes, name: setup.name });
}

/** Two managers, each on a Sentinel client of its own; `run` gets them; the managers are closed after it, the clients (left open by the store) are returned. */
async function withManagers(run: (a: LockManager, b: LockManager) => Promise<void>) {
  const clients = [sentinelClient(), sentinelClient()];
  const [a, b] = clients.map(
    (redis) => new LockManager({ provider: new RedisLockProvider({ redis, commandTimeout: COMMAND_TIMEOUT }) }),
  );
  try {
    await run(a, b);
  } finally {
    for (const m of [a, b]) {
      await m.close();
      await m.provider.close();
    }
  }
  return clients;
}

/** `b` waits for `held` (of another manager): woken by its release (not by the lease), with a greater token. */
async function wokenByRelease(b: LockManager, held: LockHandle): Promise<void> {
  const waiting = b.acquire(held.name, { waitTimeout: 20_000 });
  await sleep(500);
  const released = Date.now();
  await held.release();
  const next = await waiting;
  expect(Date.now() - released).toBeLessThan(5_000);
  expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
  await next.release();
}

beforeAll(async () => {
  setup = await RedisSentinelSetup.start('node-redis-locks');
}, 60_000);
afterAll(async () => {
  await setup?.stop();
});

test('a lock cycle through createSentinel(): the lock is on the master, a waiter is woken by release, the client stays open', async () => {
  const clients = await withManagers(async (a, b) => {
    const held = await a.acquire('cycle', { ttl: 30_000 });
    expect((await setup.master.command('exists', '{lock:cycle}')).trim()).toBe('1');
    expect(held.fencingToken).toBeGreaterThan(0);
    await wokenByRelease(b, held);
  });
  // Left open by the store, pub/sub included.
  expect(clients.every((c) => c.isOpen)).toBe(true);
  expect(String(await clients[0].sendCommand(false, ['PING']))).toBe('PONG');
  await Promise.all(clients.map((c) => c.close()));
});

// The paused holder (a child process) opens the same Redis by the master's URL: no failover happens during these cases.
const pausedHolder: PausedHolderProcess = {
  spawn: (argument) => pausedHolderOn({ kind: 'redis', url: setup.master.url }).spawn(argument),
};
describeLockProviderConformance(
  'RedisLockProvider on node-redis Sentinel clients',
  () => redisClientsTarget(sentinelClient, (c) => c.close(), inspector()),
  { describe, it, beforeAll, afterAll },
  { pausedHolder },
);

test('SENTINEL FAILOVER: locks work again on the promoted replica, waiters are still woken, fencing tokens keep rising', async () => {
  const clients = await withManagers(async (a, b) => {
    // b waits once before the failover: its subscription must follow the master.
    const first = await a.acquire('before', { ttl: 30_000 });
    const warmed = b.acquire('before', { waitTimeout: 20_000 });
    await sleep(300);
    await first.release();
    await (await warmed).release();
    const before = await tokenOf(a, 'fenced');
    expect((await setup.master.command('wait', 1, 5_000)).trim()).toBe('1');

    const oldMaster = await setup.masterPort();
    expect((await setup.sentinels[0].command('sentinel', 'failover', setup.name)).trim()).toBe('OK');
    const deadline = Date.now() + 30_000;
    while ((await setup.masterPort()) === oldMaster && Date.now() < deadline) await sleep(100);
    expect(await setup.masterPort()).not.toBe(oldMaster);
    // The old master follows the promoted replica (until then it still takes writes: Sentinel's window, not the store's).
    const [newMaster, demoted] =
      setup.master.port === oldMaster ? [setup.replica, setup.master] : [setup.master, setup.replica];
    await demoted.until((out) => out.trim().startsWith('slave'), 'role');

    // Locking again once the clients found the new master (a call in the switch may fail with LockStoreError).
    let after: number | undefined;
    while (after === undefined && Date.now() < deadline)
      after = await tokenOf(a, 'fenced').catch(() => sleep(200).then(() => undefined));
    expect(after).toBeGreaterThan(before);
    expect(await tokenOf(b, 'fenced')).toBeGreaterThan(after!);
    const held = await a.acquire('after', { ttl: 30_000 });
    expect((await newMaster.command('exists', '{lock:after}')).trim()).toBe('1');

    // A waiter in another instance is woken by release after the failover.
    await wokenByRelease(b, held);
  });
  await Promise.all(clients.map((c) => c.close()));
}, 60_000);
