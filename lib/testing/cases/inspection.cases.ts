/** Reading the store: holder(key) and inspect({ prefix, limit, cursor }). */
import { ownerTokenFor } from '../../shared/owner-token.js';
import { sleep } from '../sleep.js';
import type { CaseRegistrar } from '../case-registrar.js';
import {
  above,
  atLeast,
  atMost,
  below,
  check,
  checkEqual,
  checkFields,
  granted,
  isTrue,
} from '../conformance-assert.js';

export function inspectionCases({ test, describe }: CaseRegistrar): void {
  describe('holder(): who holds a key', ['holder'], () => {
    test('null for a free key; the owner, its instance id and the lease left for a held one; null again after release', async ({
      p,
      key,
      take,
    }) => {
      checkEqual(await p.holder!(key), null, 'holder() of a free key did not answer null');
      const owner = ownerTokenFor('host-a:4242 (blue/green)');
      await take(key, owner, 5_000);
      const h = await p.holder!(key);
      checkFields(
        h,
        { owner, instanceId: 'host-a:4242 (blue/green)' },
        'holder() of a held key did not name its owner and instance (build it with lockHolder(owner, ms))',
      );
      above(h!.remainingMs, 0, 'holder() of a held key gave no lease left (remainingMs)');
      atMost(h!.remainingMs, 5_000, 'holder() gave more lease left than the ttl (remainingMs)');
      await p.release(key, owner);
      checkEqual(await p.holder!(key), null, 'holder() of a released key did not answer null');
    });

    test('a plain owner token names no instance; a lease that ended has no holder', async ({ p, key, take }) => {
      await take(key, 'plain-owner', 200);
      checkFields(
        await p.holder!(key),
        { owner: 'plain-owner', instanceId: undefined },
        'holder() of a key held by a plain owner token is wrong',
      );
      await sleep(400);
      checkEqual(await p.holder!(key), null, 'holder() named a holder whose lease had ended');
    });

    test(
      'a waiter granted on release is the holder, with its instance id',
      async ({ p, key, take }) => {
        const first = ownerTokenFor('replica-1');
        const second = ownerTokenFor('replica-2');
        await take(key, first);
        const waiting = p.acquire({ key, owner: second, ttl: 30_000, wait: true, waitTimeout: 10_000 });
        await sleep(150);
        checkEqual(
          (await p.holder!(key))?.instanceId,
          'replica-1',
          'holder() did not name the instance holding the key',
        );
        await p.release(key, first);
        granted(await waiting, 'a waiter was never woken by the release');
        checkEqual(
          (await p.holder!(key))?.instanceId,
          'replica-2',
          'holder() did not name the waiter granted on release',
        );
        await p.release(key, second);
      },
      { needs: ['waiting'] },
    );
  });

  describe('inspect(): the locks held under a prefix', ['inspect'], () => {
    test(
      'inspect lists the locks held under a prefix: owner, one permit, fencing token, lease left, waiters; not released or other prefixes',
      async ({ p, key, take, inspectAll }) => {
        const prefix = `${key}:`;
        const a = await take(`${prefix}a`, 'owner-a', 20_000);
        const b = await take(`${prefix}b`, 'owner-b', 5_000);
        await take(`${key}-other:c`, 'owner-c', 20_000);
        await take(`${prefix}d`, 'owner-d', 20_000);
        isTrue(await p.release(`${prefix}d`, 'owner-d'), 'release() by the owner answered false');
        const waiting = p.acquire({ key: `${prefix}a`, owner: 'owner-w', ttl: 5_000, wait: true, waitTimeout: 10_000 });
        await sleep(300); // the waiter is queued at the store

        const page = await inspectAll(prefix);
        const byKey = new Map(page.locks.map((l) => [l.key, l]));
        checkEqual(
          [...byKey.keys()].sort(),
          [`${prefix}a`, `${prefix}b`],
          'inspect() did not list exactly the locks held under the prefix',
        );
        const la = byKey.get(`${prefix}a`)!;
        checkFields(
          la,
          { owner: 'owner-a', permits: 1, waiters: 1 },
          'inspect() got the owner, permits or waiters of a held lock wrong',
        );
        atLeast(la.fencingToken, a!.fencingToken, "inspect() gave a fencing token below the holder's grant");
        below(la.fencingToken, a!.fencingToken + 16, "inspect() gave a fencing token far above the holder's grant");
        above(la.remainingMs, 10_000, 'inspect() gave too little lease left (remainingMs of a 20 s lease)');
        atMost(la.remainingMs, 20_000, 'inspect() gave more lease left than the ttl');
        const lb = byKey.get(`${prefix}b`)!;
        checkFields(
          lb,
          { owner: 'owner-b', permits: 1, waiters: 0 },
          'inspect() got the owner, permits or waiters of a held lock wrong',
        );
        atLeast(lb.fencingToken, b!.fencingToken, "inspect() gave a fencing token below the holder's grant");
        atMost(lb.remainingMs, 5_000, 'inspect() gave more lease left than the ttl');
        if (lb.heldSince !== undefined)
          below(Math.abs(Date.now() - lb.heldSince), 10_000, 'inspect() gave a heldSince far from the grant time');

        // Released: gone (the waiter holds it now, under its own owner).
        isTrue(await p.release(`${prefix}a`, 'owner-a'), 'release() by the owner answered false');
        granted(await waiting, 'a waiter was never woken by the release');
        const after = await inspectAll(prefix);
        checkFields(
          after.locks.find((l) => l.key === `${prefix}a`),
          { owner: 'owner-w', waiters: 0 },
          'inspect() did not show the waiter granted on release as the holder',
        );
        isTrue(await p.release(`${prefix}a`, 'owner-w'), 'release() by the owner answered false');
        isTrue(await p.release(`${prefix}b`, 'owner-b'), 'release() by the owner answered false');
        isTrue(await p.release(`${key}-other:c`, 'owner-c'), 'release() by the owner answered false');
        checkEqual((await inspectAll(prefix)).locks, [], 'inspect() still listed released locks');
      },
      { needs: ['waiting'] },
    );

    test('inspect says since when a lock is held: the grant time, kept by extend, moved by the next grant', async ({
      p,
      key,
      take,
      inspectAll,
    }) => {
      const prefix = `${key}:`;
      // The store's clock, not this process's, stamps the grant: allow for a little skew and the round trip.
      const margin = 1_000;
      const before = Date.now();
      await take(`${prefix}a`, 'owner-a', 20_000);
      const after = Date.now();
      const first = (await inspectAll(prefix)).locks[0];
      atLeast(first?.heldSince, before - margin, 'inspect() gave a heldSince before the grant');
      atMost(first?.heldSince, after + margin, 'inspect() gave a heldSince after the grant');
      await sleep(1_500);
      isTrue(await p.extend(`${prefix}a`, 'owner-a', 20_000), 'extend() by the owner answered false');
      const extended = (await inspectAll(prefix)).locks[0];
      // Unchanged by the extend 1.5 s after the grant (a store may compute it per read, so allow a loaded machine's jitter).
      below(Math.abs(extended.heldSince! - first.heldSince!), 500, 'extend() moved heldSince (ms moved)');
      isTrue(await p.release(`${prefix}a`, 'owner-a'), 'release() by the owner answered false');
      await take(`${prefix}a`, 'owner-b', 20_000);
      const next = (await inspectAll(prefix)).locks[0];
      atLeast(next.heldSince! - first.heldSince!, 1_000, 'the next grant did not move heldSince (ms moved)');
      isTrue(await p.release(`${prefix}a`, 'owner-b'), 'release() by the owner answered false');
    });

    test('inspect pages with a cursor: each held lock once, at most `limit` per page', async ({ p, key, take }) => {
      const prefix = `${key}:`;
      const keys = Array.from({ length: 7 }, (_, i) => `${prefix}${i}`);
      for (const k of keys) granted(await take(k, `o-${k}`), 'acquire() of a free key answered null');
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await p.inspect!({ prefix, limit: 3, cursor });
        atMost(page.locks.length, 3, 'inspect() answered more locks than limit on a page');
        seen.push(...page.locks.map((l) => l.key));
        cursor = page.cursor;
        check(++pages < 5_000, 'inspect() cursors never ended (5,000 pages)'); // bounded even in a store shared with many other keys
      } while (cursor !== undefined);
      checkEqual(seen.sort(), [...keys].sort(), 'inspect() pages did not list each held lock once');
      for (const k of keys) await p.release(k, `o-${k}`);
    });
  });
}
