/**
 * The check of Redis's eviction policy (`evictionCheck`): against Redis
 * servers this file starts with each `maxmemory-policy` (and a Cluster with
 * one master set otherwise), a warning through the provider's logger at
 * connect and after a reconnect, once per finding; `'fail'` refuses lock
 * calls (the module's boot and the health indicator: test/health/).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { LockManager, LockModule, LockOptionsError, LockStoreError, type LockLogger } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { RedisCluster, RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

/** A logger that keeps the warnings. */
function recorder(): LockLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, warn: (m: string) => void warnings.push(m), error() {} };
}

const servers: RedisServer[] = [];
const providers: RedisLockProvider[] = [];
async function server(policy: string): Promise<RedisServer> {
  const s = await RedisServer.start(['--maxmemory', '3mb', '--maxmemory-policy', policy]);
  servers.push(s);
  return s;
}
function provider(
  url: string | RedisOptions,
  options: Partial<ConstructorParameters<typeof RedisLockProvider>[0]> = {},
): RedisLockProvider {
  const p = new RedisLockProvider({ redis: url, commandTimeout: 2_000, ...options });
  providers.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
}, 30_000);

/** Polls until `check` holds (at most 10 s). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not reached within 10 s');
    await sleep(20);
  }
}

const EVICTING = [
  'allkeys-lru',
  'allkeys-lfu',
  'allkeys-random',
  'volatile-lru',
  'volatile-lfu',
  'volatile-random',
  'volatile-ttl',
];

test.each(EVICTING)(
  'maxmemory-policy %s: one warning at connect that names it, says what can happen and what to set; setupCheck reports it',
  async (policy) => {
    const redis = await server(policy);
    const logger = recorder();
    const p = provider(redis.url, { logger });
    await until(() => logger.warnings.length > 0);
    expect(logger.warnings).toHaveLength(1);
    const [warning] = logger.warnings;
    expect(warning).toContain(`Redis at 127.0.0.1:${redis.port} has maxmemory-policy ${policy}`);
    expect(warning).toMatch(/evict lock keys/);
    expect(warning).toMatch(/granted to another caller/);
    expect(warning).toContain('Set maxmemory-policy noeviction');
    expect(p.setupCheck()).toEqual({ problems: [warning], refused: false });
    // Lock calls work (the default mode only warns), and pings (which read the policy again) log nothing more.
    const locks = new LockManager({ provider: p });
    await locks.withLock('x', () => undefined);
    await p.ping();
    await p.ping();
    expect(logger.warnings).toHaveLength(1);
    await locks.close();
  },
);

test('maxmemory-policy noeviction: nothing logged, nothing reported', async () => {
  const redis = await server('noeviction');
  const logger = recorder();
  const p = provider(redis.url, { logger });
  await p.ping();
  expect(logger.warnings).toEqual([]);
  expect(p.setupCheck()).toEqual({ problems: [], refused: false });
});

test('checked again after every reconnect: a new policy is logged once, the same one again is not; fixed, nothing is reported', async () => {
  const redis = await server('noeviction');
  const logger = recorder();
  const p = provider(redis.url, { logger });
  await p.ping();
  const admin = new Redis(redis.url);
  let readies = 0;
  (p.client as Redis).on('ready', () => readies++);
  try {
    // (no ping, which reads the policy too: only the reconnect's check can find it)
    const reconnect = async (): Promise<void> => {
      const before = readies;
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await until(() => readies > before);
      await sleep(300);
    };
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await reconnect();
    await until(() => logger.warnings.length === 1);
    expect(logger.warnings[0]).toContain('maxmemory-policy allkeys-lru');
    await reconnect();
    await admin.config('SET', 'maxmemory-policy', 'volatile-ttl');
    await reconnect();
    await until(() => logger.warnings.length === 2);
    expect(logger.warnings[1]).toContain('maxmemory-policy volatile-ttl');
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await reconnect();
    expect(p.setupCheck().problems).toEqual([]);
    expect(logger.warnings).toHaveLength(2);
  } finally {
    await admin.quit();
  }
}, 30_000);

test("evictionCheck: 'fail' refuses lock calls with LockStoreError that says what to set, until the policy is fixed (no reconnect needed)", async () => {
  const redis = await server('allkeys-lru');
  const p = provider(redis.url, { evictionCheck: 'fail' });
  const locks = new LockManager({ provider: p });
  const err = await locks.withLock('x', () => 1).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LockStoreError);
  expect((err as Error).message).toContain('maxmemory-policy allkeys-lru');
  expect((err as Error).message).toContain('Set maxmemory-policy noeviction');
  await expect(p.acquireMany([{ key: 'a', owner: 'o', ttl: 1_000 }])).rejects.toBeInstanceOf(LockStoreError);
  await expect(p.ping()).rejects.toBeInstanceOf(LockStoreError);
  expect(p.setupCheck().refused).toBe(true);
  await redis.command('config', 'set', 'maxmemory-policy', 'noeviction');
  expect(await locks.withLock('x', () => 1)).toBe(1);
  expect(p.setupCheck()).toEqual({ problems: [], refused: false });
  await locks.close();
});

test('a user that may not run INFO: the policy is unknown, said once (and refused in fail mode)', async () => {
  const redis = await server('noeviction');
  await redis.command('acl', 'setuser', 'locker', 'on', '>pw', '~*', '&*', '+@all', '-info');
  // (ioredis's own ready check runs INFO too: off, so that it does not warn on the console)
  const url = { host: '127.0.0.1', port: redis.port, username: 'locker', password: 'pw', enableReadyCheck: false };
  const logger = recorder();
  const p = provider(url, { logger });
  await until(() => logger.warnings.length > 0);
  expect(p.setupCheck().problems).toEqual(logger.warnings);
  expect(logger.warnings[0]).toMatch(/did not tell its maxmemory-policy .*NOPERM/);
  expect(logger.warnings[0]).toContain('evictionCheck: false');
  const strict = provider(url, { evictionCheck: 'fail' });
  await expect(strict.ping()).rejects.toBeInstanceOf(LockStoreError);
  const off = provider(url, { evictionCheck: false, logger });
  expect(await off.acquire({ key: 'k', owner: 'o', ttl: 1_000, wait: false })).not.toBeNull();
  expect(off.setupCheck()).toEqual({ problems: [], refused: false });
  expect(logger.warnings).toHaveLength(1);
});

test('a Cluster: every master is checked, and the one set otherwise is named', async () => {
  const cluster = await RedisCluster.start();
  const client = new Cluster(cluster.startupNodes);
  try {
    const odd = cluster.nodes[1];
    await odd.command('config', 'set', 'maxmemory-policy', 'volatile-lru');
    await client.ping();
    const logger = recorder();
    const p = new RedisLockProvider({ redis: client, logger });
    try {
      await p.ping();
      expect(logger.warnings).toHaveLength(1);
      expect(logger.warnings[0]).toContain(`Redis at 127.0.0.1:${odd.port} has maxmemory-policy volatile-lru`);
      expect(p.setupCheck().problems).toHaveLength(1);
    } finally {
      await p.close();
    }
  } finally {
    await client.quit();
    await cluster.stop();
  }
}, 60_000);

test('options: evictionCheck is checked, and is for the redis store only', async () => {
  expect(() => new RedisLockProvider({ redis: 'redis://127.0.0.1:1', evictionCheck: 'error' as never })).toThrow(
    LockOptionsError,
  );
  expect(() => new RedisLockProvider({ redis: 'redis://127.0.0.1:1', evictionCheck: 'error' as never })).toThrow(
    /evictionCheck must be 'warn', 'fail' or false/,
  );
  expect(() => new RedisLockProvider({ redis: 'redis://127.0.0.1:1', logger: {} as never })).toThrow(/logger/);
  expect(() => LockModule.forRoot({ evictionCheck: 'fail' })).toThrow(/evictionCheck applies to the Redis store/);
  expect(() => LockModule.forRoot({ redis: 'redis://127.0.0.1:1', evictionCheck: true as never })).toThrow(
    LockOptionsError,
  );
});
