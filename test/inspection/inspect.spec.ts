import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { InstanceOwnerTokens, instanceIdOf } from '../../lib/shared/owner-token.js';
import { InMemoryLockProvider, LockError, LockManager, LockOptionsError } from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { MinimalLockProvider } from '../support/minimal-lock-provider.js';
import { sleep } from '../support/sleep.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('LockService.inspect()', () => {
  test('names without the prefix; this process’s locks with grant time, exact token, label and local waiters; others’ without', async () => {
    const keyPrefix = `inspect-${randomBytes(4).toString('hex')}:`;
    const here = new LockManager({ provider: new RedisLockProvider({ redis: url }), keyPrefix });
    const there = new LockManager({
      provider: new RedisLockProvider({ redis: url }),
      keyPrefix,
      instanceId: 'replica-b',
    });
    try {
      const before = Date.now();
      const mine = await here.acquire('report:1', { label: 'report', ttl: 20_000 });
      const theirs = await there.acquire('report:2', { ttl: 20_000 });
      const localWaiter = here.acquire('report:1', { waitTimeout: 10_000 });
      await sleep(200);

      const page = await here.inspect();
      expect(page.store).toBe('redis');
      expect(page.cursor).toBeUndefined();
      const byName = new Map(page.locks.map((l) => [l.name, l]));
      expect([...byName.keys()].sort()).toEqual(['report:1', 'report:2']);
      const m = byName.get('report:1')!;
      expect(m).toMatchObject({
        mode: 'exclusive',
        permits: 1,
        mine: true,
        instanceId: `${hostname()}:${process.pid}`,
        label: 'report',
        fencingToken: mine.fencingToken,
        waiters: 1,
      });
      expect(m.heldSince!.getTime()).toBeGreaterThanOrEqual(before - 50);
      expect(m.heldSince!.getTime()).toBeLessThanOrEqual(Date.now());
      expect(m.leaseRemainingMs).toBeGreaterThan(10_000);
      const t = byName.get('report:2')!;
      // The other instance set instanceId: its locks name it; the store says since when it holds them.
      expect(t).toMatchObject({ mine: false, instanceId: 'replica-b', label: undefined, waiters: 0 });
      expect(t.heldSince!.getTime()).toBeGreaterThanOrEqual(before - 1_000);
      expect(t.heldSince!.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(t.fencingToken).toBeGreaterThanOrEqual(theirs.fencingToken);
      expect(JSON.stringify(page)).not.toContain((mine as unknown as { owner: string }).owner);

      // The other process's view: the same locks, the first one not its own.
      const seenThere = await there.inspect();
      // This one did not set instanceId: its locks name it by its default, <hostname>:<pid>.
      expect(seenThere.locks.find((l) => l.name === 'report:1')).toMatchObject({
        mine: false,
        instanceId: `${hostname()}:${process.pid}`,
      });
      expect(seenThere.locks.find((l) => l.name === 'report:2')).toMatchObject({ mine: true, instanceId: 'replica-b' });

      await mine.release();
      const handed = await localWaiter;
      await theirs.release();
      expect((await here.inspect()).locks.map((l) => l.name)).toEqual(['report:1']);
      await handed.release();
      expect((await here.inspect()).locks).toEqual([]);
    } finally {
      await here.close();
      await there.close();
      await here.provider.close();
      await there.provider.close();
    }
  });

  test('owner tokens of a manager with instanceId name it, each one different', () => {
    const tokens = new InstanceOwnerTokens('web 1/blue');
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const token = tokens.next();
      expect(instanceIdOf(token)).toBe('web 1/blue');
      expect(token).toMatch(/^[0-9a-f]{32}@web%201%2Fblue$/);
      seen.add(token);
    }
    expect(seen.size).toBe(600);
  });

  test('limit is checked, and a store without inspect() says what to implement', async () => {
    const locks = new LockManager({ provider: new InMemoryLockProvider() });
    await expect(locks.inspect({ limit: 0 })).rejects.toBeInstanceOf(LockOptionsError);
    await expect(locks.inspect({ limit: 5_000 })).rejects.toThrow(/limit must be an integer from 1 to 1000/);
    const plain = new LockManager({ provider: new MinimalLockProvider() });
    await expect(plain.inspect()).rejects.toThrow(LockError);
    await expect(plain.inspect()).rejects.toThrow(/"minimal" store cannot list its locks/);
  });
});
