/** acquireMany: several plain locks in one call, all or none. */
import type { LockProvider } from '../../contract/lock-provider.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { sleep } from '../sleep.js';
import { above, atLeast, check, checkEqual, granted, isFalse, isTrue, refused } from '../conformance-assert.js';

export function acquireManyCases({ test, describe }: CaseRegistrar): void {
  describe('acquireMany: several plain locks in one call, all or none', ['acquireMany'], () => {
    const many = (p: LockProvider, keys: string[], owner: string, ttl = 30_000) =>
      p.acquireMany!(keys.map((k) => ({ key: k, owner: `${owner}:${k}`, ttl })));

    test('takes every free key: one grant per key, in order, each token above the earlier grants of its key', async ({
      p,
      key,
      take,
    }) => {
      const keys = [`${key}:1`, `${key}:2`, `${key}:3`];
      const before = granted(await take(keys[1], 'early'), 'acquire() of a free key answered null').fencingToken;
      isTrue(await p.release(keys[1], 'early'), 'release() by the owner answered false');
      const grants = await many(p, keys, 'a');
      checkEqual(grants?.length, 3, 'acquireMany() of 3 free keys did not answer 3 grants');
      for (const g of grants!)
        check(typeof g.fencingToken === 'number', 'an acquireMany() grant has no numeric fencingToken');
      above(
        grants![1].fencingToken,
        before,
        'an acquireMany() grant has a fencing token not above the earlier grant of its key',
      );
      for (const k of keys) refused(await take(k, 'other'), 'a key acquireMany() took was granted to another owner');
      // Each key is then a single lock of its own.
      refused(await take(keys[1], 'after'), 'a key acquireMany() took was granted to another owner');
      isTrue(await p.release(keys[1], `a:${keys[1]}`), 'release() of a key acquireMany() took answered false');
      const after = await take(keys[1], 'after');
      above(
        granted(after, 'a released key was not free').fencingToken,
        grants![1].fencingToken,
        'a fencing token after acquireMany() is not above its grant',
      );
      isTrue(await p.extend(keys[0], `a:${keys[0]}`, 30_000), 'extend() of a key acquireMany() took answered false');
      isFalse(
        await p.extend(keys[0], 'other', 30_000),
        'extend() by a non-owner of a key acquireMany() took answered true',
      );
      isTrue(await p.release(keys[0], `a:${keys[0]}`), 'release() of a key acquireMany() took answered false');
      isTrue(await p.release(keys[2], `a:${keys[2]}`), 'release() of a key acquireMany() took answered false');
      granted(await take(keys[0], 'c'), 'a released key was not free');
      granted(await take(keys[2], 'c'), 'a released key was not free');
    });

    test('all or none: when one key is held, answers null and takes none of them', async ({ p, key, take }) => {
      const keys = [`${key}:1`, `${key}:2`, `${key}:3`];
      granted(await take(keys[2], 'b'), 'acquire() of a free key answered null');
      refused(await many(p, keys, 'a'), 'acquireMany() with one key held was granted');
      granted(await take(keys[0], 'c'), 'acquireMany() that answered null kept a key');
      granted(await take(keys[1], 'c'), 'acquireMany() that answered null kept a key');
      isTrue(await p.release(keys[2], 'b'), 'release() by the owner answered false');
      checkEqual(
        (await many(p, [`${key}:4`, keys[2]], 'a'))?.length,
        2,
        'acquireMany() of 2 free keys did not answer 2 grants',
      );
      refused(await many(p, [keys[0], `${key}:5`], 'a'), 'acquireMany() with one key held was granted');
      granted(await take(`${key}:5`, 'c'), 'acquireMany() that answered null kept a key');
    });

    test(
      'a key with a waiter queued is not free: the batch does not overtake the queue',
      async ({ p, key, take }) => {
        const keys = [`${key}:1`, `${key}:2`];
        granted(await take(keys[1], 'b', 300), 'acquire() of a free key answered null');
        const waiting = p.acquire({ key: keys[1], owner: 'w', ttl: 30_000, wait: true, waitTimeout: 10_000 });
        await sleep(50);
        refused(await many(p, keys, 'a'), 'acquireMany() overtook a queued waiter');
        granted(await take(keys[0], 'c'), 'acquireMany() that answered null kept a key');
        granted(await waiting, 'a queued waiter was not granted the key when the lease ended');
        isTrue(await p.release(keys[1], 'w'), 'release() by the owner answered false');
      },
      { needs: ['waiting'] },
    );

    test('each lease is set: keys taken with a short ttl are free after it, unless extended', async ({
      p,
      key,
      take,
    }) => {
      const keys = [`${key}:1`, `${key}:2`];
      checkEqual((await many(p, keys, 'a', 300))?.length, 2, 'acquireMany() of 2 free keys did not answer 2 grants');
      isTrue(await p.extend(keys[0], `a:${keys[0]}`, 10_000), 'extend() of a key acquireMany() took answered false');
      await sleep(700);
      refused(await take(keys[0], 'c'), 'a key acquireMany() took and extend() extended ended at its first ttl');
      granted(await take(keys[1], 'c'), 'the lease of a key acquireMany() took never ended');
    });

    test('fences: with fenceBlocks each grant reserves its block, and the next grant of that key draws above it', async ({
      p,
      key,
      take,
    }) => {
      const keys = [`${key}:1`, `${key}:2`];
      const grants = await p.acquireMany!(keys.map((k) => ({ key: k, owner: 'a', ttl: 30_000, fences: 16 })));
      const block = p.fenceBlocks ? 16 : 1;
      checkEqual(
        grants?.map((g) => g.fences ?? 1),
        [block, block],
        `acquireMany() grants did not reserve blocks of ${block} fencing tokens`,
      );
      for (const k of keys) isTrue(await p.release(k, 'a'), 'release() by the owner answered false');
      for (const [i, k] of keys.entries())
        atLeast(
          granted(await take(k, 'b'), 'a released key was not free').fencingToken,
          grants![i].fencingToken + block,
          'the next grant drew a fencing token inside the reserved block',
        );
    });
  });
}
