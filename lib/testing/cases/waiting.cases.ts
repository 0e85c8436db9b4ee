/** Waiting: woken by release, FIFO, by expiry, bounded by waitTimeout and aborts, one at a time, coalesce. */
import { randomBytes } from 'node:crypto';
import { sleep } from '../sleep.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { atLeast, below, check, checkEqual, granted, isTrue, refused } from '../conformance-assert.js';

const token = () => randomBytes(16).toString('hex');

export function waitingCases({ test, describe }: CaseRegistrar): void {
  describe('waiting: acquire with wait: true', ['waiting'], () => {
    test('a waiter is woken by release, long before the lease would end', async ({ p, key, take }) => {
      await take(key, 'holder', 30_000);
      const started = Date.now();
      const waiting = p.acquire({ key, owner: 'waiter', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      await sleep(200);
      await p.release(key, 'holder');
      granted(await waiting, 'a waiter was never woken by the release (its wait ended without a grant)');
      below(
        Date.now() - started,
        5_000,
        'a waiter was not woken by the release: it got the key only much later (ms after it queued)',
      );
      isTrue(await p.extend(key, 'waiter', 30_000), 'the woken waiter does not hold the key (extend() answered false)');
    });

    test('a try right after a release does not overtake a queued waiter: the release hands the key to the waiter', async ({
      p,
      q,
      key,
      take,
    }) => {
      for (const via of [p, q]) {
        const k = `${key}:${via === p ? 'here' : 'peer'}`;
        granted(await take(k, 'holder'), 'acquire() of a free key answered null');
        const waiting = p.acquire({ key: k, owner: 'waiter', ttl: 30_000, wait: true, waitTimeout: 10_000 });
        await sleep(200); // the waiter is queued at the store
        isTrue(await p.release(k, 'holder'), 'release() by the owner answered false');
        refused(
          await via.acquire({ key: k, owner: 'late', ttl: 30_000, wait: false }),
          'a try right after the release overtook the queued waiter (acquire without waiting got the key)',
        );
        granted(await waiting, 'the queued waiter was not granted the key on release');
        isTrue(await p.release(k, 'waiter'), 'release() by the woken waiter answered false');
      }
    });

    test('waiters are granted in arrival order (FIFO)', async ({ p, key, take }) => {
      await take(key, 'holder');
      const order: string[] = [];
      const waiters = ['w1', 'w2', 'w3'].map(async (owner, i) => {
        await sleep(100 * i);
        const g = await p.acquire({ key, owner, ttl: 30_000, wait: true, waitTimeout: 15_000 });
        order.push(owner);
        granted(g, `waiter ${owner} was never granted the key`);
        await sleep(50);
        await p.release(key, owner);
      });
      await sleep(600);
      await p.release(key, 'holder');
      await Promise.all(waiters);
      checkEqual(order, ['w1', 'w2', 'w3'], 'waiters were not granted in arrival order (FIFO)');
    });

    test('a waiter is granted the key when the holder vanishes and its lease runs out', async ({ p, key, take }) => {
      await take(key, 'crashed', 500);
      const started = Date.now();
      const grant = await p.acquire({ key, owner: 'waiter', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      granted(
        grant,
        "a waiter was not granted the key when the holder's 500 ms lease ran out (it waited its whole 10 s waitTimeout)",
      );
      atLeast(Date.now() - started, 300, "a waiter was granted the key before the holder's lease ended (ms waited)");
      below(Date.now() - started, 8_000, "a waiter got the key long after the holder's lease ended (ms waited)");
    });

    test('waitTimeout bounds the wait, and the waiter leaves the queue', async ({ p, key, take }) => {
      await take(key, 'holder');
      const started = Date.now();
      const g = await p.acquire({ key, owner: 'impatient', ttl: 30_000, wait: true, waitTimeout: 300 });
      const waited = Date.now() - started;
      refused(g, 'a wait with waitTimeout 300 on a held key was granted');
      atLeast(waited, 250, 'a wait with waitTimeout 300 ended early (ms waited)');
      below(waited, 5_000, 'a wait with waitTimeout 300 went on far past it (ms waited)');
      const next = p.acquire({ key, owner: 'patient', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      await sleep(100);
      await p.release(key, 'holder');
      granted(
        await next,
        'a waiter behind one that timed out was never granted: the timed-out waiter stayed in the queue',
      );
      check(!(await p.extend(key, 'impatient', 1_000)), 'a waiter that timed out holds the key');
    });

    test("a wait that ended (timeout or abort) is in nobody's way once its call returned: a try right after the release gets the key", async ({
      p,
      q,
      key,
    }) => {
      const spurious: string[] = [];
      for (let i = 0; i < 32; i++) {
        const k = `${key}:${i}`;
        const ac = new AbortController();
        granted(
          await q.acquire({ key: k, owner: 'holder', ttl: 30_000, wait: false }),
          'acquire() of a free key answered null',
        );
        const waiting = p.acquire({
          key: k,
          owner: 'waiter',
          ttl: 30_000,
          wait: true,
          ...(i % 2 ? { signal: ac.signal } : { waitTimeout: 30 }),
        });
        if (i % 2) setTimeout(() => ac.abort(), 30);
        refused(await waiting, i % 2 ? 'an aborted wait was granted' : 'a wait past its waitTimeout was granted');
        isTrue(await q.release(k, 'holder'), 'release() by the owner answered false');
        // Through the waiter's provider and through the other one, in turn.
        if (!(await (i % 4 < 2 ? p : q).acquire({ key: k, owner: 'try', ttl: 30_000, wait: false })))
          spurious.push(i % 2 ? `abort ${i}` : `timeout ${i}`);
      }
      checkEqual(spurious, [], 'a wait that had ended still blocked the key after the release (or took it)');
    });

    test('waitTimeout 0 answers at once', async ({ p, key, take }) => {
      await take(key, 'holder');
      const started = Date.now();
      refused(
        await p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, waitTimeout: 0 }),
        'a wait with waitTimeout 0 on a held key was granted',
      );
      below(Date.now() - started, 2_000, 'a wait with waitTimeout 0 did not answer at once (ms)');
    });

    test('an aborted wait resolves null and never takes the key', async ({ p, key, take }) => {
      await take(key, 'holder');
      const ac = new AbortController();
      const waiting = p.acquire({ key, owner: 'aborted', ttl: 30_000, wait: true, signal: ac.signal });
      await sleep(150);
      ac.abort();
      refused(await waiting, 'an aborted wait resolved with a grant');
      await p.release(key, 'holder');
      await sleep(200);
      check(!(await p.extend(key, 'aborted', 1_000)), 'an aborted waiter took the key after the release');
      granted(await take(key, 'fresh'), 'an aborted waiter still blocks the key after the release');
    });

    test('an already aborted signal does not queue', async ({ p, key, take }) => {
      await take(key, 'holder');
      const ac = new AbortController();
      ac.abort();
      refused(
        await p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, signal: ac.signal }),
        'a wait with an already aborted signal was granted',
      );
    });

    test('many concurrent waiters each get the key once, one at a time', async ({ p, key }) => {
      let inside = 0;
      let maxInside = 0;
      let entered = 0;
      await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const owner = `c${i}`;
          const g = await p.acquire({ key, owner, ttl: 30_000, wait: true, waitTimeout: 20_000 });
          granted(g, `concurrent waiter ${owner} was never granted the key within 20 s`);
          inside++;
          entered++;
          maxInside = Math.max(maxInside, inside);
          await sleep(5);
          inside--;
          isTrue(
            await p.release(key, owner),
            `release() by waiter ${owner}, which was granted the key, answered false`,
          );
        }),
      );
      checkEqual(entered, 12, 'not every concurrent waiter got the key');
      checkEqual(maxInside, 1, 'two concurrent waiters held the key at once');
    });

    test("a release and another owner's wait sent at once (through coalesce where the store has it) act in that order", async ({
      p,
      key,
    }) => {
      const a = token();
      const b = token();
      granted(await p.acquire({ key, owner: a, ttl: 10_000, wait: false }), 'acquire() of a free key answered null');
      const together = <T>(send: () => T): T => (p.coalesce ? p.coalesce(send) : send());
      let ranInside = false;
      const [released, granting] = together(() => {
        ranInside = true;
        return [p.release(key, a), p.acquire({ key, owner: b, ttl: 10_000, wait: true, waitTimeout: 5_000 })] as const;
      });
      check(ranInside, 'coalesce(send) did not run send at once');
      isTrue(await released, 'release() by the owner answered false');
      granted(await granting, 'a wait sent right after a release (one coalesced write) was not granted');
      isTrue(
        await p.extend(key, b, 10_000),
        'the waiter granted after the release does not hold the key (extend() answered false)',
      );
      isTrue(await p.release(key, b), 'release() by the owner answered false');
      if (p.coalesce) {
        checkEqual(
          p.coalesce(() => 7),
          7,
          'coalesce(send) did not return what send returned',
        );
        let thrown: unknown;
        try {
          p.coalesce(() => {
            throw new Error('from send');
          });
        } catch (err) {
          thrown = err;
        }
        check((thrown as Error | undefined)?.message === 'from send', 'coalesce(send) did not throw what send threw');
      }
    });
  });
}
