import { Redis } from 'ioredis';
import { LockManager } from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS } from '../../lib/stores/redis/redis-lock.scripts.js';
import type { GrowthTable } from '../support/growth.js';
import { fmt, type BenchContext } from '../support/runner.js';

export interface LeftoverOptions {
  /** Distinct names, each locked once. */
  names: number;
  /** When to count, in ms after the last release. */
  at: readonly number[];
}

/** Callers at once: names per entity, as many requests lock at a time. */
const CONCURRENCY = 50;

/**
 * Scenario 11, "what released names leave in Redis": one process locks
 * `names` distinct names once each (`withLock('order:<i>', ...)`, 50 at a
 * time, as names per entity are locked), then counts the keys of those names
 * (SCAN of the run's own prefix) and their bytes (`MEMORY USAGE` of each)
 * at each `at` ms after the last release, per name.
 */
export async function leftoverKeys(ctx: BenchContext, o: LeftoverOptions): Promise<GrowthTable> {
  const prefix = `bench:s11:${Date.now()}:`;
  const provider = new RedisLockProvider({ redis: ctx.env.redisUrl });
  const locks = new LockManager({ provider, keyPrefix: prefix });
  const admin = new Redis(ctx.env.redisUrl);
  const table: GrowthTable = {
    scenario: 's11',
    title: `what ${fmt(o.names)} names, each locked once (withLock), leave in Redis after the last release`,
    columns: ['after the last release', 'keys left', 'keys/name', 'bytes left', 'bytes/name'],
    rows: [],
    notes: [
      `keys: SCAN MATCH {${prefix}* on the bench's own Redis; bytes: MEMORY USAGE of each key found`,
      `what may be left is each name's fencing counter, until the Redis clock has passed its last token and ${FENCE_GRACE_MS / 1000} s more (FENCE_GRACE_MS; docs/stores.md, "Keys")`,
    ],
  };
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < o.names) await locks.withLock(`order:${next++}`, () => undefined);
      }),
    );
    const released = Date.now();
    for (const ms of o.at) {
      await new Promise((r) => setTimeout(r, Math.max(0, released + ms - Date.now())));
      const { keys, bytes } = await count(admin, `{${prefix}*`);
      ctx.log(
        `  s11 ${fmt(ms / 1000, 1)} s after the last release: ${fmt(keys)} keys, ${fmt(bytes)} bytes left of ${fmt(o.names)} names`,
      );
      table.rows.push({
        cells: [`${fmt(ms / 1000, 1)} s`, fmt(keys), fmt(keys / o.names, 2), fmt(bytes), fmt(bytes / o.names, 1)],
        raw: { afterMs: ms, names: o.names, keys, bytes, keysPerName: keys / o.names, bytesPerName: bytes / o.names },
      });
    }
  } finally {
    await locks.close();
    await provider.close();
    await admin.quit();
  }
  return table;
}

/** The keys matching `pattern`, and their bytes in Redis. */
async function count(admin: Redis, pattern: string): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  do {
    const [next, found] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000);
    cursor = next;
    keys += found.length;
    const sizes = await Promise.all(found.map((k) => admin.memory('USAGE', k)));
    bytes += sizes.reduce<number>((sum, b) => sum + Number(b ?? 0), 0);
  } while (cursor !== '0');
  return { keys, bytes };
}
