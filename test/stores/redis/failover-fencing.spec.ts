/**
 * Fencing tokens across a failover to a replica that lags (promoted by hand,
 * REPLICAOF NO ONE), and waitForReplicas, against a master and a replica
 * this file starts on free ports.
 */
import { LockManager, LockStoreError, type LockHandle } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { tokenOf } from '../../support/fencing.js';
import { REPLICATION_FAST, RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';
import { FENCE_GRACE_MS } from '../../../lib/stores/redis/redis-lock.scripts.js';

let master: RedisServer;
let replica: RedisServer;
const opened: LockManager[] = [];

/** A manager on its own connection to `port`. */
function manager(port: number, options: { waitForReplicas?: number; commandTimeout?: number } = {}): LockManager {
  const m = new LockManager({
    provider: new RedisLockProvider({ redis: { port, host: '127.0.0.1' }, commandTimeout: 1_000, ...options }),
  });
  opened.push(m);
  return m;
}

async function startPair(): Promise<void> {
  master = await RedisServer.start(REPLICATION_FAST);
  replica = await RedisServer.startReplica(master);
}
afterEach(async () => {
  replica?.resume();
  await Promise.all(
    opened.splice(0).map(async (m) => {
      await m.close();
      await m.provider.close();
    }),
  );
  await Promise.all([master?.stop(), replica?.stop()]);
}, 60_000);

test('after a failover to a replica with an older counter, or none, every token is greater than all granted before', async () => {
  await startPair();
  const m = manager(master.port);
  // x: its counter reaches the replica, its later grants do not; z: the same, with blocks of tokens (local hand-off).
  const x1 = await tokenOf(m, 'x');
  const z1 = await m.acquire('z');
  await z1.release();
  expect((await master.command('wait', 1, 5_000)).trim()).toBe('1');

  replica.pause();
  await master.command('client', 'kill', 'type', 'replica');
  const x2 = await tokenOf(m, 'x');
  expect(x2).toBeGreaterThan(x1);
  // A grant that reserved a block: the holder hands the lock to the next caller of its process with the block's next token.
  // (the second caller queues in-process while the first is at the store: it belongs to the first's batch)
  const [first, next] = [m.acquire('z'), m.acquire('z')];
  const z2 = await first;
  await z2.release();
  const z2next = await next; // still believes it holds the lock when the master dies
  expect(z2next.fencingToken).toBe(z2.fencingToken + 1);
  // y: never reaches the replica at all.
  const y1 = await tokenOf(m, 'y');

  await master.kill();
  replica.resume();
  await replica.command('replicaof', 'no', 'one');
  const promoted = manager(replica.port);

  expect(await tokenOf(promoted, 'x')).toBeGreaterThan(x2);
  // Above the whole block the lost grant reserved, which its process may have handed out in part.
  const z3 = await promoted.acquire('z');
  expect(z3.fencingToken).toBeGreaterThan(z2.fencingToken + 15);
  await z3.release();
  expect(await tokenOf(promoted, 'y')).toBeGreaterThan(y1);
}, 60_000);

test('a counter ahead of the clock reaches the replica with the same end, and after a failover the promoted replica still draws above it', async () => {
  await startPair();
  const m = manager(master.port);
  // As after more than one token per microsecond, or an earlier failover to a master whose clock was behind: 6 s ahead.
  const [s, us] = (await master.command('time')).trim().split('\n');
  const ahead = Number(s) * 1_000_000 + Number(us) + 6_000_000;
  await master.command('set', '{lock:ahead}:fence', String(ahead));
  const before = await tokenOf(m, 'ahead');
  expect(before).toBeGreaterThan(ahead);
  // Its end is an absolute time on the clock the token came from, the same on the replica
  // (polled: a WAIT on another connection than the provider's does not wait for the provider's writes).
  const end = Number((await master.command('pexpiretime', '{lock:ahead}:fence')).trim());
  expect(end).toBeGreaterThan(Math.floor(ahead / 1_000));
  await replica.until((out) => out.trim() === String(end), 'pexpiretime', '{lock:ahead}:fence');

  await sleep(FENCE_GRACE_MS + 500); // past the grace after the release: kept, as the clock is still behind it
  await master.kill();
  await replica.command('replicaof', 'no', 'one');
  const promoted = manager(replica.port);
  const after = await tokenOf(promoted, 'ahead');
  expect(after).toBeGreaterThan(before);
}, 60_000);

describe('waitForReplicas', () => {
  test('grants once the replica has them; with the replica stopped, the call fails with LockStoreError and the lock is given back', async () => {
    await startPair();
    // (a wide bound: on a busy machine a replica may take a while to acknowledge)
    const a = manager(master.port, { waitForReplicas: 1, commandTimeout: 3_000 });
    const b = manager(master.port, { waitForReplicas: 1, commandTimeout: 3_000 });
    expect(await tokenOf(a, 'r')).toBeGreaterThan(0);

    // A hand-off to a waiter of another instance is confirmed too.
    const held = await a.acquire('h');
    const waiting = b.acquire('h', { waitTimeout: 10_000 });
    await sleep(100);
    await held.release();
    const handed = await waiting;
    expect(handed.fencingToken).toBeGreaterThan(held.fencingToken);
    await handed.release();

    replica.pause();
    try {
      let started = Date.now();
      const failed = await a.tryAcquire('r').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(LockStoreError);
      expect((failed as Error).message).toMatch(/replicas acknowledged|did not answer/);
      expect(Date.now() - started).toBeLessThan(8_000);
      // Given back: the key is free on the master.
      await master.until((out) => out.trim() === '0', 'exists', '{lock:r}');

      // A waiter handed the lock while the replica is away fails the same way, and the lock goes on.
      const holder = await a.acquire('w').catch((err: unknown) => err);
      expect(holder).toBeInstanceOf(LockStoreError); // the holder's own grant is not confirmed either
      const plain = manager(master.port);
      const h2 = (await plain.tryAcquire('w')) as LockHandle;
      expect(h2).not.toBeNull();
      const waiter = b.acquire('w', { waitTimeout: 10_000 }).catch((err: unknown) => err);
      await sleep(100);
      started = Date.now();
      await h2.release();
      expect(await waiter).toBeInstanceOf(LockStoreError);
      expect(Date.now() - started).toBeLessThan(8_000);
      await master.until((out) => out.trim() === '0', 'exists', '{lock:w}');
    } finally {
      replica.resume();
    }
    await replica.until((info) => info.includes('master_link_status:up'), 'info', 'replication');
    expect(await tokenOf(a, 'r')).toBeGreaterThan(0);
  }, 60_000);
});

test('waitForReplicas must be a whole number, and is for the redis store only', async () => {
  expect(() => new RedisLockProvider({ redis: 'redis://127.0.0.1:1', waitForReplicas: -1 })).toThrow(/waitForReplicas/);
  expect(() => new RedisLockProvider({ redis: 'redis://127.0.0.1:1', waitForReplicas: 1.5 })).toThrow(
    /waitForReplicas/,
  );
  const { createLockProvider } = await import('../../../lib/stores/lock-provider.factory.js');
  await expect(createLockProvider({ postgres: 'postgres://x', waitForReplicas: 1 })).rejects.toThrow(
    /waitForReplicas applies to the Redis store/,
  );
});
