/** Semaphores (`limit`): N holders, permits returned by release and expiry, owner checks, the same limit for all. */
import { LockOptionsError } from '../../errors/lock.errors.js';
import type { LockAcquireRequest, LockGrant, LockProvider } from '../../contract/lock-provider.js';
import type { ConformanceContext } from '../conformance-case.interface.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { sleep } from '../sleep.js';
import {
  above,
  atLeast,
  below,
  check,
  checkEqual,
  checkFields,
  granted,
  isFalse,
  isTrue,
  matches,
  refused,
  rejection,
} from '../conformance-assert.js';

/** `acquire` on `key` without waiting, with the request's other fields from `o`. @internal */
export const acquirer =
  ({ p, key }: ConformanceContext) =>
  (owner: string, o: Partial<LockAcquireRequest> = {}, q: LockProvider = p) =>
    q.acquire({ key, owner, ttl: 30_000, wait: false, ...o });

/** A wait whose outcome a case can look at before it ends. @internal */
export interface Waiter {
  done: boolean;
  grant: LockGrant | null | undefined;
  promise: Promise<LockGrant | null>;
}

/** Starts a wait (15 s at most) of `owner`. @internal */
export const waiter =
  (c: ConformanceContext) =>
  (owner: string, o: Partial<LockAcquireRequest> = {}, q: LockProvider = c.p): Waiter => {
    const w: Waiter = { done: false, grant: undefined, promise: undefined as unknown as Promise<LockGrant | null> };
    w.promise = Promise.resolve(acquirer(c)(owner, { wait: true, waitTimeout: 15_000, ...o }, q)).then((g) => {
      w.done = true;
      w.grant = g;
      return g;
    });
    return w;
  };

export const shared = { mode: 'shared' } as const;

export function semaphoreCases({ test }: CaseRegistrar): void {
  test('the store declares supports.limit and supports.shared', async ({ p }) => {
    checkFields(
      p.supports ?? {},
      { limit: true, shared: true },
      'the store does not declare supports: { limit: true, shared: true }',
    );
  });

  test('a released semaphore or shared name: past the stated window nothing of it is left, and its next grants get greater tokens', async (c) => {
    const { p, key, target } = c;
    const acq = acquirer(c);
    const token = async (owner: string, o: Partial<LockAcquireRequest>) =>
      granted(await acq(owner, o), `${owner} was refused on a free key`).fencingToken;
    const tokens = [await token('s1', { limit: 2 }), await token('s2', { limit: 2 })];
    isTrue(await p.release(key, 's1'), 'release() of a permit by its owner answered false');
    isTrue(await p.release(key, 's2'), 'release() of a permit by its owner answered false');
    tokens.push(await token('r1', shared), await token('r2', shared));
    isTrue(await p.release(key, 'r1'), 'release() by a reader answered false');
    isTrue(await p.release(key, 'r2'), 'release() by a reader answered false');
    await sleep((target.releaseWindowMs ?? 0) + 1_000);
    if (target.leftovers)
      checkEqual(
        await target.leftovers(key),
        [],
        'the store still keeps records of a released semaphore or shared name after the release window',
      );
    above(
      await token('s3', { limit: 2 }),
      Math.max(...tokens),
      'a fencing token after the release window is not above the earlier ones (the counter was forgotten)',
    );
    isTrue(await p.release(key, 's3'), 'release() of a permit by its owner answered false');
  });

  test('a semaphore of limit N admits N holders and never N+1 (try and wait)', async (c) => {
    const { p, key } = c;
    const acq = acquirer(c);
    for (const o of ['a', 'b', 'c'])
      granted(await acq(o, { limit: 3 }), `holder ${o} of a semaphore of limit 3 was refused`);
    refused(await acq('d', { limit: 3 }), 'a semaphore of limit 3 admitted a 4th holder');
    refused(
      await acq('d', { limit: 3, wait: true, waitTimeout: 300 }),
      'a semaphore of limit 3 admitted a 4th holder after a wait',
    );
    isTrue(await p.release(key, 'b'), 'release() of a permit by its owner answered false');
    granted(await acq('d', { limit: 3 }), 'a released permit was not free');
    refused(await acq('e', { limit: 3 }), 'a semaphore of limit 3 admitted a 4th holder');
  });

  test('a released permit admits exactly one waiter, woken by the release (long before any lease ends)', async (c) => {
    const { p, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    granted(await acq('a', { limit: 2 }), 'a permit of a free semaphore was refused');
    granted(await acq('b', { limit: 2 }), 'a permit of a semaphore with one left was refused');
    const w1 = waitFor('w1', { limit: 2 });
    await sleep(100);
    const w2 = waitFor('w2', { limit: 2 });
    await sleep(300);
    checkEqual(
      [w1.done, w2.done],
      [false, false],
      'a waiter for a full semaphore was answered before any permit was released',
    );
    const started = Date.now();
    isTrue(await p.release(key, 'a'), 'release() of a permit by its owner answered false');
    granted(await w1.promise, 'the first waiter was not granted the released permit');
    below(Date.now() - started, 5_000, 'the first waiter was not woken by the release (ms)');
    await sleep(300);
    check(!w2.done, 'one released permit admitted two waiters');
    refused(await acq('late', { limit: 2 }), 'a full semaphore with a waiter queued admitted a later caller'); // full, and w2 is queued
    isTrue(await p.release(key, 'b'), 'release() of a permit by its owner answered false');
    granted(await w2.promise, 'the second waiter was not granted the next released permit');
    isTrue(await p.extend(key, 'w1', 30_000), 'a waiter granted a permit does not hold it');
    isTrue(await p.extend(key, 'w2', 30_000), 'a waiter granted a permit does not hold it');
  });

  test("a holder's lease ending returns its permit; the other holder keeps its own", async (c) => {
    const { p, key } = c;
    const acq = acquirer(c);
    granted(await acq('short', { limit: 2, ttl: 400 }), 'a permit of a free semaphore was refused');
    granted(await acq('long', { limit: 2 }), 'a permit of a semaphore with one left was refused');
    refused(await acq('c', { limit: 2 }), 'a semaphore of limit 2 admitted a 3rd holder');
    const started = Date.now();
    const g = await acq('w', { limit: 2, wait: true, waitTimeout: 10_000 });
    granted(g, 'a waiter did not get the permit whose 400 ms lease ended (the lease never ended)');
    atLeast(Date.now() - started, 200, 'a waiter got a permit before any lease ended (ms)');
    below(Date.now() - started, 8_000, 'a waiter got the permit long after its lease ended (ms)');
    isTrue(await p.extend(key, 'long', 30_000), "a permit's expiry ended the other holder's permit too");
    isFalse(await p.extend(key, 'short', 30_000), 'the owner of an expired permit could still extend it');
    isFalse(await p.release(key, 'short'), 'the owner of an expired permit could still release it');
    refused(await acq('c', { limit: 2 }), 'a semaphore of limit 2 admitted a 3rd holder');
  });

  test('release and extend are owner-checked per holder', async (c) => {
    const { p, key } = c;
    const acq = acquirer(c);
    granted(await acq('a', { limit: 3 }), 'a permit of a free semaphore was refused');
    granted(await acq('b', { limit: 3 }), 'a permit of a semaphore with two left was refused');
    isFalse(await p.release(key, 'x'), 'release() of a semaphore by a non-owner answered true');
    isFalse(await p.extend(key, 'x', 30_000), 'extend() of a semaphore by a non-owner answered true');
    isTrue(await p.release(key, 'a'), 'release() of a permit by its owner answered false');
    isFalse(await p.release(key, 'a'), 'a second release() of a permit answered true');
    isFalse(await p.extend(key, 'a', 30_000), 'extend() of a released permit answered true');
    isTrue(await p.extend(key, 'b', 30_000), "one holder's release ended another holder's permit");
    granted(await acq('c', { limit: 3 }), 'a released permit was not free');
    granted(await acq('d', { limit: 3 }), 'a released permit was not free');
    refused(await acq('e', { limit: 3 }), 'a semaphore of limit 3 admitted a 4th holder');
    // Readers too: each frees only itself.
    const k2 = `${key}:rw`;
    granted(await acq('r1', { ...shared, key: k2 }), 'a reader of a free key was refused');
    granted(await acq('r2', { ...shared, key: k2 }), 'a second reader was refused');
    isTrue(await p.release(k2, 'r1'), 'release() by a reader answered false');
    isFalse(await p.extend(k2, 'r1', 30_000), 'extend() by a released reader answered true');
    isTrue(await p.extend(k2, 'r2', 30_000), "one reader's release ended another reader's hold");
    refused(await acq('w', { key: k2 }), 'a writer entered while a reader held');
  });

  test('an exclusive request with another limit throws LockOptionsError naming both, while the key is held and while it is only awaited', async (c) => {
    const { p, key } = c;
    const [acq, waitFor] = [acquirer(c), waiter(c)];
    const refusedWith = async (send: () => unknown, what: string) => {
      const err = await rejection(send, `${what}: the store did not throw LockOptionsError`);
      check(
        err instanceof LockOptionsError,
        `${what}: the store threw ${err.name}, not LockOptionsError: ${err.message}`,
      );
      return err;
    };
    granted(await acq('a', { limit: 2 }), 'a permit of a free semaphore was refused');
    for (const o of [{ limit: 3 }, {}, { limit: 3, wait: true, waitTimeout: 1_000 }]) {
      const err = await refusedWith(() => acq('b', o), `a request of limit ${o.limit ?? 1} on a semaphore of limit 2`);
      matches(
        err.message,
        new RegExp(key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
        'the LockOptionsError does not name the key',
      );
      matches(err.message, /\b2\b/, 'the LockOptionsError does not name the limit the key has');
      matches(err.message, o.limit === 3 ? /\b3\b/ : /\b1\b/, 'the LockOptionsError does not name the limit asked for');
      matches(err.message, /same limit/i, 'the LockOptionsError does not say to use the same limit');
    }
    granted(await acq('b', { limit: 2 }), 'a refused call took a permit'); // the refused calls took nothing
    // Only awaited: readers hold, a writer of limit 2 waits.
    const k2 = `${key}:awaited`;
    granted(await acq('r', { ...shared, key: k2 }), 'a reader of a free key was refused');
    const w = waitFor('w', { key: k2, limit: 2 });
    await sleep(200);
    const err = await refusedWith(
      () => acq('x', { key: k2, limit: 3 }),
      'a request of limit 3 on a key awaited with limit 2',
    );
    matches(err.message, /\b2\b/, 'the LockOptionsError does not name the limit the key is awaited with');
    matches(err.message, /\b3\b/, 'the LockOptionsError does not name the limit asked for');
    refused(await acq('r2', { ...shared, key: k2 }), 'a reader overtook a queued writer'); // shared carries no limit: no error, queued behind the writer
    isTrue(await p.release(k2, 'r'), 'release() by a reader answered false');
    granted(await w.promise, 'a queued writer was not woken by the last reader leaving');
  });

  test('many concurrent callers of a semaphore and of a read/write name: never more inside than allowed, each once', async (c) => {
    const { p, key } = c;
    const acq = acquirer(c);
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const g = await acq(`c${i}`, { limit: 3, wait: true, waitTimeout: 20_000 });
        granted(g, `concurrent caller c${i} of a semaphore never got a permit within 20 s`);
        maxInside = Math.max(maxInside, ++inside);
        await sleep(20);
        inside--;
        isTrue(await p.release(key, `c${i}`), 'release() of a permit by its owner answered false');
      }),
    );
    checkEqual(
      maxInside,
      3,
      'concurrent callers of a semaphore of limit 3 were not 3 inside at most (and at some point 3)',
    );
    const k = `${key}:rw`;
    let readers = 0;
    let writers = 0;
    const broken: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const write = i % 3 === 0;
        const g = await acq(`m${i}`, { key: k, wait: true, waitTimeout: 20_000, ...(write ? {} : shared) });
        granted(g, `concurrent ${write ? 'writer' : 'reader'} m${i} never got in within 20 s`);
        if (write) writers++;
        else readers++;
        if (writers > 1 || (writers === 1 && readers > 0)) broken.push(`m${i}: ${writers} writers, ${readers} readers`);
        await sleep(20);
        if (write) writers--;
        else readers--;
        isTrue(await p.release(k, `m${i}`), 'release() by a holder answered false');
      }),
    );
    checkEqual(broken, [], 'a writer held together with another writer or with readers');
  });
}
