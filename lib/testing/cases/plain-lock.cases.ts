/** The plain lock: grant, owner-checked release and extend, leases on the store's clock, fencing tokens, ping, extendMany. */
import { sleep } from '../sleep.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { above, check, checkEqual, granted, isFalse, isTrue, refused } from '../conformance-assert.js';

export function plainLockCases({ test }: CaseRegistrar): void {
  test('grants a free key, and refuses it to another owner while held', async ({ key, take }) => {
    const a = await take(key, 'a');
    granted(a, 'acquire() of a free key answered null');
    check(typeof a!.fencingToken === 'number', `a grant has no numeric fencingToken (got ${typeof a!.fencingToken})`);
    refused(await take(key, 'b'), 'acquire() by another owner was granted while the key was held');
    refused(
      await take(key, 'a'),
      'acquire() by the holder itself was granted again (a store grant is not reentrant: it needs a free key)',
    );
  });

  test('release frees the key for its owner only', async ({ p, key, take }) => {
    await take(key, 'a');
    isFalse(await p.release(key, 'b'), 'release() by a non-owner answered true');
    refused(await take(key, 'c'), 'release() by a non-owner freed the lock');
    isTrue(await p.release(key, 'a'), 'release() by the owner answered false');
    granted(await take(key, 'c'), 'the key was not free after its owner released it');
    isFalse(await p.release(key, 'a'), 'a second release() by the former owner answered true');
  });

  test('release of a key nobody holds answers false', async ({ p, key }) => {
    isFalse(await p.release(key, 'nobody'), 'release() of a key nobody holds answered true');
  });

  test('extend works for the owner only', async ({ p, key, take }) => {
    await take(key, 'a', 5_000);
    isFalse(await p.extend(key, 'b', 5_000), 'extend() by a non-owner answered true');
    isTrue(await p.extend(key, 'a', 5_000), 'extend() by the owner answered false');
  });

  test('a lease expires: the key is free after ttl, and the old owner can no longer extend it', async ({
    p,
    key,
    take,
  }) => {
    await take(key, 'a', 300);
    refused(await take(key, 'b'), 'a held key was granted to another owner');
    await sleep(900);
    granted(await take(key, 'b'), 'the lease never ended: the key was still held 900 ms after a 300 ms lease');
    isFalse(
      await p.extend(key, 'a', 5_000),
      'extend() by the owner of an expired lease answered true (the key has a new holder)',
    );
    isFalse(
      await p.release(key, 'a'),
      'release() by the owner of an expired lease answered true (the key has a new holder)',
    );
    refused(await take(key, 'c'), "the old owner's release() freed the new holder's lock");
  });

  test('extend keeps a lock past its original ttl; a shorter extend shortens it', async ({ p, key, take }) => {
    await take(key, 'a', 600);
    await sleep(300);
    isTrue(await p.extend(key, 'a', 3_000), 'extend() by the owner of a live lease answered false');
    await sleep(600);
    refused(await take(key, 'b'), 'extend() did not keep the lock: it ended at its original ttl');
    isTrue(await p.extend(key, 'a', 200), 'a shortening extend() by the owner answered false');
    await sleep(700);
    granted(await take(key, 'b'), 'a shorter extend() did not shorten the lease');
  });

  test('fencing tokens strictly increase across grants, releases and expiries', async ({ p, key, take }) => {
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const g = await take(key, `o${i}`);
      tokens.push(granted(g, 'a released key was not granted again').fencingToken);
      await p.release(key, `o${i}`);
    }
    const g = await take(key, 'short', 200);
    tokens.push(granted(g, 'a released key was not granted again').fencingToken);
    await sleep(600);
    tokens.push(granted(await take(key, 'after-expiry'), 'the key was still held after its 200 ms lease').fencingToken);
    for (let i = 1; i < tokens.length; i++)
      above(
        tokens[i],
        tokens[i - 1],
        `fencing token ${i + 1} of the key is not above the one before (tokens: ${tokens.join(', ')})`,
      );
  });

  test(
    'a released name: past the stated window nothing of it is left (where the store can be looked at), and its next grant still gets a greater token than every earlier one',
    async ({ p, key, take, target }) => {
      const window = target.releaseWindowMs ?? 0;
      const fences = p.fenceBlocks ? 16 : 1;
      const names = [key, `${key}:waited`, `${key}:expired`];
      // A grant that reserved a block (the next grant draws above all of it), one handed to a waiter, one whose lease ran out.
      const first = granted(
        await p.acquire({ key, owner: 'a', ttl: 30_000, wait: false, fences }),
        'acquire() of a free key answered null',
      );
      let top = first.fencingToken + (first.fences ?? 1) - 1;
      isTrue(await p.release(key, 'a'), 'release() by the owner answered false');
      const inside = granted(await take(key, 'b'), 'a released key was not free');
      above(inside.fencingToken, top, "a grant drew a fencing token inside the previous grant's reserved block");
      isTrue(await p.release(key, 'b'), 'release() by the owner answered false');
      top = inside.fencingToken;
      await take(names[1], 'holder');
      const waiting = p.acquire({
        key: names[1],
        owner: 'waiter',
        ttl: 30_000,
        wait: true,
        waitTimeout: 10_000,
        fences,
      });
      await sleep(150);
      isTrue(await p.release(names[1], 'holder'), 'release() by the owner answered false');
      const handed = granted(await waiting, 'a waiter was never woken by the release');
      isTrue(
        await p.extend(names[1], 'waiter', 30_000),
        'the woken waiter does not hold the key (extend() answered false)',
      );
      isTrue(await p.release(names[1], 'waiter'), 'release() by the woken waiter answered false');
      const expiring = granted(await take(names[2], 'short', 200), 'acquire() of a free key answered null');

      await sleep(window + 1_000);
      if (target.leftovers)
        for (const name of names)
          checkEqual(
            await target.leftovers(name),
            [],
            `the store still keeps records of a released name ${window + 1_000} ms after its release`,
          );
      above(
        granted(await take(key, 'c'), 'a released key was not free').fencingToken,
        top,
        'a fencing token after the release window is not above the earlier ones (the counter was forgotten)',
      );
      above(
        granted(await take(names[1], 'd'), 'a released key was not free').fencingToken,
        handed.fencingToken + (handed.fences ?? 1) - 1,
        'a fencing token after the release window is not above the earlier ones (the counter was forgotten)',
      );
      above(
        granted(await take(names[2], 'e'), 'a key whose lease ended was not free').fencingToken,
        expiring.fencingToken,
        'a fencing token after an expiry and the release window is not above the earlier ones (the counter was forgotten)',
      );
      for (const [name, owner] of [
        [key, 'c'],
        [names[1], 'd'],
        [names[2], 'e'],
      ])
        isTrue(await p.release(name, owner), 'release() by the owner answered false');
    },
    { needs: ['waiting'] },
  );

  test('different keys never block each other', async ({ key, take }) => {
    granted(await take(`${key}:1`, 'a'), 'acquire() of a free key answered null');
    granted(await take(`${key}:2`, 'b'), 'a held key blocked a different key');
  });

  test('ping answers with a round-trip time', async ({ p }) => {
    const ms = await p.ping();
    check(
      typeof ms === 'number' && ms >= 0,
      `ping() answered ${String(ms)}, not a round-trip time in ms (a number >= 0)`,
    );
  });

  test(
    'extendMany answers per lock, in order, as extend would (owner-checked), and really sets each lease',
    async ({ p, key, take }) => {
      check(
        typeof p.extendMany === 'function',
        'the store has no extendMany(); pass { extendMany: false } to the kit if it does not offer it',
      );
      const mine = Array.from({ length: 30 }, (_, i) => `${key}:mine:${i}`);
      for (const k of mine) granted(await take(k, 'a', 2_000), 'acquire() of a free key answered null');
      await take(`${key}:other`, 'b', 2_000);
      await take(`${key}:released`, 'a', 2_000);
      await p.release(`${key}:released`, 'a');
      await take(`${key}:short`, 'a', 5_000);
      const answers = await p.extendMany!([
        ...mine.map((k) => ({ key: k, owner: 'a', ttl: 10_000 })),
        { key: `${key}:other`, owner: 'a', ttl: 10_000 }, // held by another owner
        { key: `${key}:free`, owner: 'a', ttl: 10_000 }, // never taken
        { key: `${key}:released`, owner: 'a', ttl: 10_000 }, // released
        { key: `${key}:short`, owner: 'a', ttl: 200 }, // shortened, as extend may
      ]);
      checkEqual(
        answers,
        [...mine.map(() => true), false, false, false, true],
        'extendMany() did not answer per lock, in order, as extend() would (true for 30 held, false for one held by another owner, a free one, a released one, true for a shortened one)',
      );
      checkEqual(await p.extendMany!([]), [], 'extendMany([]) did not answer []');
      await sleep(2_300);
      // Past the first leases: the extended keys are still held, the one owned by b (not extended) and the shortened one are free.
      for (const k of mine) refused(await take(k, 'c'), 'a lease extendMany() extended ended at its original ttl');
      granted(await take(`${key}:other`, 'c'), "extendMany() by a non-owner extended another owner's lease");
      granted(await take(`${key}:short`, 'c'), 'extendMany() with a shorter ttl did not shorten the lease');
      granted(await take(`${key}:free`, 'c'), 'extendMany() of a free key took it');
      checkEqual(
        await p.extendMany!([
          { key: mine[0], owner: 'c', ttl: 10_000 },
          { key: mine[1], owner: 'a', ttl: 10_000 },
        ]),
        [false, true],
        'extendMany() did not check the owner of each lock',
      );
      for (const k of mine) isTrue(await p.release(k, 'a'), 'release() by the owner answered false');
    },
    { needs: ['extendMany'] },
  );
}
