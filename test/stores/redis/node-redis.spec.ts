/**
 * The Redis store on a node-redis client when Redis fails: nothing listens,
 * the server is killed and restarted, a password is missing, the script
 * cache is flushed. Every call stays bounded by `commandTimeout` (also while
 * node-redis reconnects) and fails with a LockStoreError that names the
 * cause the client saw; the client the app passed stays open.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import { LockStoreError } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { freePort } from '../../support/free-port.js';
import { RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

const COMMAND_TIMEOUT = 400;
/** The bound, with a wide margin for a busy machine. */
const BOUND = COMMAND_TIMEOUT + 1_000;
const unique = (what: string) => `node-redis:${what}:${randomBytes(6).toString('hex')}`;

/** A node-redis client of `url` that reports its errors to nobody (the provider watches them). */
function nodeRedis(url: string) {
  const client = createClient({ url, socket: { reconnectStrategy: () => 50 } });
  client.on('error', () => {});
  return client;
}

/** How long `call` took, and what it threw. */
async function failure(call: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  try {
    await call();
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
  throw new Error('the call did not fail');
}

test('nothing listens: acquire fails within the bound with a LockStoreError naming ECONNREFUSED and the address', async () => {
  const port = await freePort();
  const client = nodeRedis(`redis://127.0.0.1:${port}`);
  const provider = new RedisLockProvider({ redis: client, commandTimeout: COMMAND_TIMEOUT });
  try {
    const { ms, error } = await failure(() =>
      provider.acquire({ key: unique('nowhere'), owner: 'a', ttl: 1_000, wait: false }),
    );
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(
      new RegExp(`Redis at 127\\.0\\.0\\.1:${port} refused the connection \\(ECONNREFUSED\\)`),
    );
    expect(ms).toBeLessThan(BOUND);
  } finally {
    await provider.close();
    await client.destroy();
  }
});

test('Redis killed mid-run: calls fail within the bound naming the cause, and locking works once it is back; the client stays open', async () => {
  const server = await RedisServer.start();
  const client = nodeRedis(server.url);
  const provider = new RedisLockProvider({ redis: client, commandTimeout: COMMAND_TIMEOUT });
  try {
    const key = unique('restart');
    expect(await provider.acquire({ key, owner: 'a', ttl: 5_000, wait: false })).not.toBeNull();
    expect(await provider.release(key, 'a')).toBe(true);
    await server.kill();
    const { ms, error } = await failure(() => provider.acquire({ key, owner: 'b', ttl: 5_000, wait: false }));
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/ECONNREFUSED|closed the connection|did not answer/);
    expect(ms).toBeLessThan(BOUND);
    const again = await RedisServer.start([], server.port);
    try {
      let grant = null;
      for (let i = 0; i < 100 && grant === null; i++) {
        grant = await provider.acquire({ key, owner: 'c', ttl: 5_000, wait: false }).catch(() => null);
        if (grant === null) await sleep(50);
      }
      expect(grant).not.toBeNull();
      await provider.close();
      expect(client.isOpen).toBe(true);
    } finally {
      await again.stop();
    }
  } finally {
    await provider.close();
    client.destroy();
    await server.stop();
  }
}, 30_000);

test('a password the client lacks: a LockStoreError naming NOAUTH', async () => {
  const server = await RedisServer.start(['--requirepass', 'secret']);
  const client = nodeRedis(server.url);
  const provider = new RedisLockProvider({ redis: client, commandTimeout: COMMAND_TIMEOUT });
  try {
    const { error } = await failure(() =>
      provider.acquire({ key: unique('noauth'), owner: 'a', ttl: 1_000, wait: false }),
    );
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/NOAUTH/);
  } finally {
    await provider.close();
    client.destroy();
    await server.stop();
  }
});

test('SCRIPT FLUSH: the next calls run by EVAL after NOSCRIPT, and a wait is still handed the lock', async () => {
  const server = await RedisServer.start();
  const [a, b] = [nodeRedis(server.url), nodeRedis(server.url)];
  const [pa, pb] = [new RedisLockProvider({ redis: a }), new RedisLockProvider({ redis: b })];
  try {
    const key = unique('noscript');
    expect(await pa.acquire({ key, owner: 'a', ttl: 30_000, wait: false })).not.toBeNull();
    await server.command('SCRIPT', 'FLUSH');
    const waiting = pb.acquire({ key, owner: 'b', ttl: 30_000, wait: true, waitTimeout: 10_000 });
    await sleep(200);
    await server.command('SCRIPT', 'FLUSH');
    expect(await pa.release(key, 'a')).toBe(true);
    expect(await waiting).not.toBeNull();
    expect(await pb.extendMany([{ key, owner: 'b', ttl: 30_000 }])).toEqual([true]);
  } finally {
    await Promise.all([pa.close(), pb.close()]);
    await Promise.all([a.close(), b.close()]);
    await server.stop();
  }
});

test('after a failover demoted its server to a replica: a LockStoreError naming READONLY; locking again once it is a master', async () => {
  const [server, promoted] = await Promise.all([RedisServer.start(), RedisServer.start()]);
  const client = nodeRedis(server.url);
  const provider = new RedisLockProvider({ redis: client, commandTimeout: COMMAND_TIMEOUT });
  try {
    const key = unique('readonly');
    expect(await provider.acquire({ key, owner: 'a', ttl: 5_000, wait: false })).not.toBeNull();
    // What a failover does to the old master: it follows the promoted replica, and refuses writes.
    await server.command('replicaof', '127.0.0.1', promoted.port);
    const { ms, error } = await failure(() =>
      provider.acquire({ key: unique('readonly'), owner: 'b', ttl: 5_000, wait: false }),
    );
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toMatch(/READONLY/);
    expect(ms).toBeLessThan(BOUND);
    await server.command('replicaof', 'no', 'one');
    expect(await provider.acquire({ key: unique('readonly'), owner: 'c', ttl: 5_000, wait: false })).not.toBeNull();
    expect(client.isOpen).toBe(true);
  } finally {
    await provider.close();
    client.destroy();
    await Promise.all([server.stop(), promoted.stop()]);
  }
}, 30_000);
