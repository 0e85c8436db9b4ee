/**
 * The contract every LockProvider must keep, as a jest suite. Run it against
 * a provider with:
 *
 *   describeLockProviderConformance('RedisLockProvider', async () => ({
 *     provider: new RedisLockProvider({ redis: url }),
 *     cleanup: async () => {},
 *   }));
 *
 * Keys are unique per test, so suites can share a store.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LockLostError,
  LockManager,
  LockOptionsError,
  type LockAcquireRequest,
  type LockGrant,
  type LockInspectPage,
  type LockProvider,
  type StoredLock,
} from '../../lib/index.js';
import { ownerTokenFor } from '../../lib/shared/owner-token.js';
import { ChildLines, spawnFixture } from '../support/child-process.js';
import { sleep } from '../support/sleep.js';
import type { ChildStore } from './fixtures/child-store.js';
import { describeInputLimitsConformance } from './lock-input-limits.conformance.js';

export interface ConformanceTarget {
  provider: LockProvider;
  /**
   * A second provider on the same store through connections of its own (as
   * another instance would be); closed with the suite. Default: `provider`.
   */
  peer?: LockProvider;
  /** Called after the suite, after provider.close(). */
  cleanup?: () => Promise<void>;
  /** How a child process opens the same store (the paused-holder case runs a holder in one). */
  child: ChildStore;
  /**
   * How long, in ms, the store may keep something of a name after its last
   * release (Redis: its fencing counter, `FENCE_GRACE_MS`). Default 0.
   */
  releaseWindowMs?: number;
  /**
   * What the store still keeps of `key` (e.g. the Redis keys of the name
   * that exist); given by stores whose records can be looked at, which
   * must keep nothing of a released name past `releaseWindowMs`.
   */
  leftovers?: (key: string) => Promise<string[]>;
}

/** How much of the contract a store keeps. */
export interface ConformanceOptions {
  /**
   * Run the semaphore (`limit`) and read/write (`mode: 'shared'`) cases.
   * Default `true`: every built-in store must declare `supports` with both
   * and pass them; only a store that does not declare them passes `false`.
   */
  limitAndShared?: boolean;
  /**
   * Run the `acquireMany` cases (several plain locks in one call, all or
   * none). Default `true`; a store without `acquireMany` passes `false`.
   */
  acquireMany?: boolean;
}

const token = () => randomBytes(16).toString('hex');

export function describeLockProviderConformance(label: string, create: () => Promise<ConformanceTarget>, options: ConformanceOptions = {}): void {
  describe(`LockProvider conformance: ${label}`, () => {
    let target: ConformanceTarget;
    let p: LockProvider;
    let key: string;

    beforeAll(async () => {
      target = await create();
      p = target.provider;
    });
    afterAll(async () => {
      if (target?.peer && target.peer !== p) await target.peer.close();
      await p?.close();
      await target?.cleanup?.();
    });
    beforeEach(() => {
      key = `conformance:${token()}`;
    });

    describeInputLimitsConformance(() => p);

    const take = (k: string, owner: string, ttl = 30_000) => p.acquire({ key: k, owner, ttl, wait: false });
    /**
     * Every held lock under `prefix`, following the cursor: a store shared with
     * many other keys (a Redis SCAN) may answer a cursor before it has seen them all.
     */
    const inspectAll = async (prefix: string): Promise<LockInspectPage> => {
      const locks: StoredLock[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await p.inspect!({ prefix, limit: 100, cursor });
        locks.push(...page.locks);
        cursor = page.cursor;
        expect(++pages).toBeLessThan(5_000);
      } while (cursor !== undefined);
      return { locks };
    };

    test('grants a free key, and refuses it to another owner while held', async () => {
      const a = await take(key, 'a');
      expect(a).not.toBeNull();
      expect(typeof a!.fencingToken).toBe('number');
      expect(await take(key, 'b')).toBeNull();
      expect(await take(key, 'a')).toBeNull(); // not reentrant at store level: a new acquisition needs a free key
    });

    test('release frees the key for its owner only', async () => {
      await take(key, 'a');
      expect(await p.release(key, 'b')).toBe(false);
      expect(await take(key, 'c')).toBeNull();
      expect(await p.release(key, 'a')).toBe(true);
      expect(await take(key, 'c')).not.toBeNull();
      expect(await p.release(key, 'a')).toBe(false);
    });

    test('release of a key nobody holds answers false', async () => {
      expect(await p.release(key, 'nobody')).toBe(false);
    });

    test('extend works for the owner only', async () => {
      await take(key, 'a', 5_000);
      expect(await p.extend(key, 'b', 5_000)).toBe(false);
      expect(await p.extend(key, 'a', 5_000)).toBe(true);
    });

    test('a lease expires: the key is free after ttl, and the old owner can no longer extend it', async () => {
      await take(key, 'a', 300);
      expect(await take(key, 'b')).toBeNull();
      await sleep(900);
      const b = await take(key, 'b');
      expect(b).not.toBeNull();
      expect(await p.extend(key, 'a', 5_000)).toBe(false);
      expect(await p.release(key, 'a')).toBe(false);
      expect(await take(key, 'c')).toBeNull();
    });

    test('extend keeps a lock past its original ttl; a shorter extend shortens it', async () => {
      await take(key, 'a', 600);
      await sleep(300);
      expect(await p.extend(key, 'a', 3_000)).toBe(true);
      await sleep(600);
      expect(await take(key, 'b')).toBeNull();
      expect(await p.extend(key, 'a', 200)).toBe(true);
      await sleep(700);
      expect(await take(key, 'b')).not.toBeNull();
    });

    test('fencing tokens strictly increase across grants, releases and expiries', async () => {
      const tokens: number[] = [];
      for (let i = 0; i < 5; i++) {
        const g = await take(key, `o${i}`);
        tokens.push(g!.fencingToken);
        await p.release(key, `o${i}`);
      }
      const g = await take(key, 'short', 200);
      tokens.push(g!.fencingToken);
      await sleep(600);
      tokens.push((await take(key, 'after-expiry'))!.fencingToken);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    });

    test('a released name: past the stated window nothing of it is left (where the store can be looked at), and its next grant still gets a greater token than every earlier one', async () => {
      const window = target.releaseWindowMs ?? 0;
      const fences = p.fenceBlocks ? 16 : 1;
      const names = [key, `${key}:waited`, `${key}:expired`];
      // A grant that reserved a block (the next grant draws above all of it), one handed to a waiter, one whose lease ran out.
      const first = (await p.acquire({ key, owner: 'a', ttl: 30_000, wait: false, fences }))!;
      let top = first.fencingToken + (first.fences ?? 1) - 1;
      expect(await p.release(key, 'a')).toBe(true);
      const inside = (await take(key, 'b'))!;
      expect(inside.fencingToken).toBeGreaterThan(top);
      expect(await p.release(key, 'b')).toBe(true);
      top = inside.fencingToken;
      await take(names[1], 'holder');
      const waiting = p.acquire({ key: names[1], owner: 'waiter', ttl: 30_000, wait: true, waitTimeout: 10_000, fences });
      await sleep(150);
      expect(await p.release(names[1], 'holder')).toBe(true);
      const handed = (await waiting)!;
      expect(await p.extend(names[1], 'waiter', 30_000)).toBe(true);
      expect(await p.release(names[1], 'waiter')).toBe(true);
      const expiring = (await take(names[2], 'short', 200))!;

      await sleep(window + 1_000);
      if (target.leftovers) for (const name of names) expect(await target.leftovers(name)).toEqual([]);
      const after = (await take(key, 'c'))!;
      expect(after.fencingToken).toBeGreaterThan(top);
      expect((await take(names[1], 'd'))!.fencingToken).toBeGreaterThan(handed.fencingToken + (handed.fences ?? 1) - 1);
      expect((await take(names[2], 'e'))!.fencingToken).toBeGreaterThan(expiring.fencingToken);
      for (const [name, owner] of [
        [key, 'c'],
        [names[1], 'd'],
        [names[2], 'e'],
      ])
        expect(await p.release(name, owner)).toBe(true);
    }, 30_000);

    test('different keys never block each other', async () => {
      expect(await take(`${key}:1`, 'a')).not.toBeNull();
      expect(await take(`${key}:2`, 'b')).not.toBeNull();
    });

    test('a waiter is woken by release, long before the lease would end', async () => {
      await take(key, 'holder', 30_000);
      const started = Date.now();
      const waiting = p.acquire({ key, owner: 'waiter', ttl: 30_000, wait: true });
      await sleep(200);
      await p.release(key, 'holder');
      const grant = await waiting;
      expect(grant).not.toBeNull();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await p.extend(key, 'waiter', 30_000)).toBe(true);
    });

    test('waiters are granted in arrival order (FIFO)', async () => {
      await take(key, 'holder');
      const order: string[] = [];
      const waiters = ['w1', 'w2', 'w3'].map(async (owner, i) => {
        await sleep(100 * i);
        const g = await p.acquire({ key, owner, ttl: 30_000, wait: true });
        order.push(owner);
        expect(g).not.toBeNull();
        await sleep(50);
        await p.release(key, owner);
      });
      await sleep(600);
      await p.release(key, 'holder');
      await Promise.all(waiters);
      expect(order).toEqual(['w1', 'w2', 'w3']);
    });

    test('a waiter is granted the key when the holder vanishes and its lease runs out', async () => {
      await take(key, 'crashed', 500);
      const started = Date.now();
      const grant = await p.acquire({ key, owner: 'waiter', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      expect(grant).not.toBeNull();
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(Date.now() - started).toBeLessThan(8_000);
    });

    test('waitTimeout bounds the wait, and the waiter leaves the queue', async () => {
      await take(key, 'holder');
      const started = Date.now();
      const g = await p.acquire({ key, owner: 'impatient', ttl: 30_000, wait: true, waitTimeout: 300 });
      const waited = Date.now() - started;
      expect(g).toBeNull();
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(5_000);
      const next = p.acquire({ key, owner: 'patient', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      await sleep(100);
      await p.release(key, 'holder');
      expect(await next).not.toBeNull();
      expect(await p.extend(key, 'impatient', 1_000)).toBe(false);
    });

    test("a wait that ended (timeout or abort) is in nobody's way once its call returned: a try right after the release gets the key", async () => {
      const q = target.peer ?? p;
      const spurious: string[] = [];
      for (let i = 0; i < 32; i++) {
        const k = `${key}:${i}`;
        const ac = new AbortController();
        expect(await q.acquire({ key: k, owner: 'holder', ttl: 30_000, wait: false })).not.toBeNull();
        const waiting = p.acquire({ key: k, owner: 'waiter', ttl: 30_000, wait: true, ...(i % 2 ? { signal: ac.signal } : { waitTimeout: 30 }) });
        if (i % 2) setTimeout(() => ac.abort(), 30);
        expect(await waiting).toBeNull();
        expect(await q.release(k, 'holder')).toBe(true);
        // Through the waiter's provider and through the other one, in turn.
        if (!(await (i % 4 < 2 ? p : q).acquire({ key: k, owner: 'try', ttl: 30_000, wait: false }))) spurious.push(i % 2 ? `abort ${i}` : `timeout ${i}`);
      }
      expect(spurious).toEqual([]);
    });

    test('waitTimeout 0 answers at once', async () => {
      await take(key, 'holder');
      const started = Date.now();
      expect(await p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, waitTimeout: 0 })).toBeNull();
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    test('an aborted wait resolves null and never takes the key', async () => {
      await take(key, 'holder');
      const ac = new AbortController();
      const waiting = p.acquire({ key, owner: 'aborted', ttl: 30_000, wait: true, signal: ac.signal });
      await sleep(150);
      ac.abort();
      expect(await waiting).toBeNull();
      await p.release(key, 'holder');
      await sleep(200);
      expect(await p.extend(key, 'aborted', 1_000)).toBe(false);
      expect(await take(key, 'fresh')).not.toBeNull();
    });

    test('an already aborted signal does not queue', async () => {
      await take(key, 'holder');
      const ac = new AbortController();
      ac.abort();
      expect(await p.acquire({ key, owner: 'w', ttl: 30_000, wait: true, signal: ac.signal })).toBeNull();
    });

    test('many concurrent waiters each get the key once, one at a time', async () => {
      let inside = 0;
      let maxInside = 0;
      let entered = 0;
      await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const owner = `c${i}`;
          const g = await p.acquire({ key, owner, ttl: 30_000, wait: true, waitTimeout: 20_000 });
          expect(g).not.toBeNull();
          inside++;
          entered++;
          maxInside = Math.max(maxInside, inside);
          await sleep(5);
          inside--;
          expect(await p.release(key, owner)).toBe(true);
        }),
      );
      expect(entered).toBe(12);
      expect(maxInside).toBe(1);
    });

    test("a release and another owner's wait sent at once (through coalesce where the store has it) act in that order", async () => {
      const a = token();
      const b = token();
      expect(await p.acquire({ key, owner: a, ttl: 10_000, wait: false })).not.toBeNull();
      const together = <T>(send: () => T): T => (p.coalesce ? p.coalesce(send) : send());
      let ranInside = false;
      const [released, granted] = together(() => {
        ranInside = true;
        return [p.release(key, a), p.acquire({ key, owner: b, ttl: 10_000, wait: true, waitTimeout: 5_000 })] as const;
      });
      expect(ranInside).toBe(true); // at once, not later
      expect(await released).toBe(true);
      expect(await granted).not.toBeNull();
      expect(await p.extend(key, b, 10_000)).toBe(true);
      expect(await p.release(key, b)).toBe(true);
      if (p.coalesce) {
        expect(p.coalesce(() => 7)).toBe(7);
        expect(() =>
          p.coalesce!(() => {
            throw new Error('from send');
          }),
        ).toThrow('from send');
      }
    });

    describe('holder(): who holds a key', () => {
      const holderOf = (k: string) => {
        if (typeof p.holder !== 'function') throw new Error(`${label} has no holder(); every built-in store must have it`);
        return p.holder(k);
      };

      test('null for a free key; the owner, its instance id and the lease left for a held one; null again after release', async () => {
        expect(await holderOf(key)).toBeNull();
        const owner = ownerTokenFor('host-a:4242 (blue/green)');
        await take(key, owner, 5_000);
        const h = await holderOf(key);
        expect(h).toEqual({ owner, instanceId: 'host-a:4242 (blue/green)', remainingMs: expect.any(Number) });
        expect(h!.remainingMs).toBeGreaterThan(0);
        expect(h!.remainingMs).toBeLessThanOrEqual(5_000);
        await p.release(key, owner);
        expect(await holderOf(key)).toBeNull();
      });

      test('a plain owner token names no instance; a lease that ended has no holder', async () => {
        await take(key, 'plain-owner', 200);
        expect(await holderOf(key)).toEqual({ owner: 'plain-owner', instanceId: undefined, remainingMs: expect.any(Number) });
        await sleep(400);
        expect(await holderOf(key)).toBeNull();
      });

      test('a waiter granted on release is the holder, with its instance id', async () => {
        const first = ownerTokenFor('replica-1');
        const second = ownerTokenFor('replica-2');
        await take(key, first);
        const waiting = p.acquire({ key, owner: second, ttl: 30_000, wait: true, waitTimeout: 10_000 });
        await sleep(150);
        expect((await holderOf(key))?.instanceId).toBe('replica-1');
        await p.release(key, first);
        expect(await waiting).not.toBeNull();
        expect((await holderOf(key))?.instanceId).toBe('replica-2');
        await p.release(key, second);
      });
    });

    test('inspect lists the locks held under a prefix: owner, one permit, fencing token, lease left, waiters; not released or other prefixes', async () => {
      expect(typeof p.inspect).toBe('function');
      const prefix = `${key}:`;
      const a = await take(`${prefix}a`, 'owner-a', 20_000);
      const b = await take(`${prefix}b`, 'owner-b', 5_000);
      await take(`${key}-other:c`, 'owner-c', 20_000);
      await take(`${prefix}d`, 'owner-d', 20_000);
      expect(await p.release(`${prefix}d`, 'owner-d')).toBe(true);
      const waiting = p.acquire({ key: `${prefix}a`, owner: 'owner-w', ttl: 5_000, wait: true, waitTimeout: 10_000 });
      await sleep(300); // the waiter is queued at the store

      const page = await inspectAll(prefix);
      const byKey = new Map(page.locks.map((l) => [l.key, l]));
      expect([...byKey.keys()].sort()).toEqual([`${prefix}a`, `${prefix}b`]);
      const la = byKey.get(`${prefix}a`)!;
      expect(la).toMatchObject({ owner: 'owner-a', permits: 1, waiters: 1 });
      expect(la.fencingToken).toBeGreaterThanOrEqual(a!.fencingToken);
      expect(la.fencingToken).toBeLessThan(a!.fencingToken + 16);
      expect(la.remainingMs).toBeGreaterThan(10_000);
      expect(la.remainingMs).toBeLessThanOrEqual(20_000);
      const lb = byKey.get(`${prefix}b`)!;
      expect(lb).toMatchObject({ owner: 'owner-b', permits: 1, waiters: 0 });
      expect(lb.fencingToken).toBeGreaterThanOrEqual(b!.fencingToken);
      expect(lb.remainingMs).toBeLessThanOrEqual(5_000);
      if (lb.heldSince !== undefined) expect(Math.abs(Date.now() - lb.heldSince)).toBeLessThan(10_000);

      // Released: gone (the waiter holds it now, under its own owner).
      expect(await p.release(`${prefix}a`, 'owner-a')).toBe(true);
      expect(await waiting).not.toBeNull();
      const after = await inspectAll(prefix);
      expect(after.locks.find((l) => l.key === `${prefix}a`)).toMatchObject({ owner: 'owner-w', waiters: 0 });
      expect(await p.release(`${prefix}a`, 'owner-w')).toBe(true);
      expect(await p.release(`${prefix}b`, 'owner-b')).toBe(true);
      expect(await p.release(`${key}-other:c`, 'owner-c')).toBe(true);
      expect((await inspectAll(prefix)).locks).toEqual([]);
    });

    test('inspect says since when a lock is held: the grant time, kept by extend, moved by the next grant', async () => {
      const prefix = `${key}:`;
      // The store's clock, not this process's, stamps the grant: allow for a little skew and the round trip.
      const margin = 1_000;
      const before = Date.now();
      await take(`${prefix}a`, 'owner-a', 20_000);
      const after = Date.now();
      const first = (await inspectAll(prefix)).locks[0];
      expect(first.heldSince).toBeGreaterThanOrEqual(before - margin);
      expect(first.heldSince).toBeLessThanOrEqual(after + margin);
      await sleep(1_500);
      expect(await p.extend(`${prefix}a`, 'owner-a', 20_000)).toBe(true);
      const extended = (await inspectAll(prefix)).locks[0];
      // Unchanged by the extend 1.5 s after the grant (a store may compute it per read, so allow a loaded machine's jitter).
      expect(Math.abs(extended.heldSince! - first.heldSince!)).toBeLessThan(500);
      expect(await p.release(`${prefix}a`, 'owner-a')).toBe(true);
      await take(`${prefix}a`, 'owner-b', 20_000);
      const next = (await inspectAll(prefix)).locks[0];
      expect(next.heldSince! - first.heldSince!).toBeGreaterThanOrEqual(1_000);
      expect(await p.release(`${prefix}a`, 'owner-b')).toBe(true);
    });

    test('inspect pages with a cursor: each held lock once, at most `limit` per page', async () => {
      const prefix = `${key}:`;
      const keys = Array.from({ length: 7 }, (_, i) => `${prefix}${i}`);
      for (const k of keys) expect(await take(k, `o-${k}`)).not.toBeNull();
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await p.inspect!({ prefix, limit: 3, cursor });
        expect(page.locks.length).toBeLessThanOrEqual(3);
        seen.push(...page.locks.map((l) => l.key));
        cursor = page.cursor;
        expect(++pages).toBeLessThan(5_000); // bounded even in a store shared with many other keys
      } while (cursor !== undefined);
      expect(seen.sort()).toEqual([...keys].sort());
      for (const k of keys) await p.release(k, `o-${k}`);
    });

    if (options.limitAndShared !== false) {
      describe('semaphores (limit) and read/write locks (mode)', () => {
        /** Every built-in store keeps these: a store without `supports` fails here, clearly, rather than skipping. */
        const acq = (owner: string, o: Partial<LockAcquireRequest> = {}, q: LockProvider = p) => {
          if (!q.supports?.limit || !q.supports?.shared)
            throw new Error(
              `${label} does not declare supports: { limit: true, shared: true }; every built-in store must keep semaphores and read/write locks`,
            );
          return q.acquire({ key, owner, ttl: 30_000, wait: false, ...o });
        };
        const shared = { mode: 'shared' } as const;
        /** A wait whose outcome the test can look at before it ends. */
        const waitFor = (owner: string, o: Partial<LockAcquireRequest> = {}, q: LockProvider = p) => {
          const w = { done: false, grant: undefined as LockGrant | null | undefined, promise: undefined as unknown as Promise<LockGrant | null> };
          w.promise = Promise.resolve(acq(owner, { wait: true, waitTimeout: 15_000, ...o }, q)).then((g) => {
            w.done = true;
            w.grant = g;
            return g;
          });
          return w;
        };

        test('a released semaphore or shared name: past the stated window nothing of it is left, and its next grants get greater tokens', async () => {
          const tokens = [(await acq('s1', { limit: 2 }))!.fencingToken, (await acq('s2', { limit: 2 }))!.fencingToken];
          expect(await p.release(key, 's1')).toBe(true);
          expect(await p.release(key, 's2')).toBe(true);
          tokens.push((await acq('r1', shared))!.fencingToken, (await acq('r2', shared))!.fencingToken);
          expect(await p.release(key, 'r1')).toBe(true);
          expect(await p.release(key, 'r2')).toBe(true);
          await sleep((target.releaseWindowMs ?? 0) + 1_000);
          if (target.leftovers) expect(await target.leftovers(key)).toEqual([]);
          const next = (await acq('s3', { limit: 2 }))!.fencingToken;
          expect(next).toBeGreaterThan(Math.max(...tokens));
          expect(await p.release(key, 's3')).toBe(true);
        }, 30_000);
        const rejection = async (send: () => unknown): Promise<Error> => {
          try {
            await send();
          } catch (err) {
            return err as Error;
          }
          throw new Error('expected a LockOptionsError, the call succeeded');
        };

        test('the store declares supports.limit and supports.shared', () => {
          expect(p.supports).toMatchObject({ limit: true, shared: true });
        });

        test('a semaphore of limit N admits N holders and never N+1 (try and wait)', async () => {
          for (const o of ['a', 'b', 'c']) expect(await acq(o, { limit: 3 })).not.toBeNull();
          expect(await acq('d', { limit: 3 })).toBeNull();
          expect(await acq('d', { limit: 3, wait: true, waitTimeout: 300 })).toBeNull();
          expect(await p.release(key, 'b')).toBe(true);
          expect(await acq('d', { limit: 3 })).not.toBeNull();
          expect(await acq('e', { limit: 3 })).toBeNull();
        });

        test('a released permit admits exactly one waiter, woken by the release (long before any lease ends)', async () => {
          expect(await acq('a', { limit: 2 })).not.toBeNull();
          expect(await acq('b', { limit: 2 })).not.toBeNull();
          const w1 = waitFor('w1', { limit: 2 });
          await sleep(100);
          const w2 = waitFor('w2', { limit: 2 });
          await sleep(300);
          expect([w1.done, w2.done]).toEqual([false, false]);
          const started = Date.now();
          expect(await p.release(key, 'a')).toBe(true);
          expect(await w1.promise).not.toBeNull();
          expect(Date.now() - started).toBeLessThan(5_000);
          await sleep(300);
          expect(w2.done).toBe(false);
          expect(await acq('late', { limit: 2 })).toBeNull(); // full, and w2 is queued
          expect(await p.release(key, 'b')).toBe(true);
          expect(await w2.promise).not.toBeNull();
          expect(await p.extend(key, 'w1', 30_000)).toBe(true);
          expect(await p.extend(key, 'w2', 30_000)).toBe(true);
        });

        test("a holder's lease ending returns its permit; the other holder keeps its own", async () => {
          expect(await acq('short', { limit: 2, ttl: 400 })).not.toBeNull();
          expect(await acq('long', { limit: 2 })).not.toBeNull();
          expect(await acq('c', { limit: 2 })).toBeNull();
          const started = Date.now();
          const g = await acq('w', { limit: 2, wait: true, waitTimeout: 10_000 });
          expect(g).not.toBeNull();
          expect(Date.now() - started).toBeGreaterThanOrEqual(200);
          expect(Date.now() - started).toBeLessThan(8_000);
          expect(await p.extend(key, 'long', 30_000)).toBe(true);
          expect(await p.extend(key, 'short', 30_000)).toBe(false);
          expect(await p.release(key, 'short')).toBe(false);
          expect(await acq('c', { limit: 2 })).toBeNull();
        });

        test('release and extend are owner-checked per holder', async () => {
          expect(await acq('a', { limit: 3 })).not.toBeNull();
          expect(await acq('b', { limit: 3 })).not.toBeNull();
          expect(await p.release(key, 'x')).toBe(false);
          expect(await p.extend(key, 'x', 30_000)).toBe(false);
          expect(await p.release(key, 'a')).toBe(true);
          expect(await p.release(key, 'a')).toBe(false);
          expect(await p.extend(key, 'a', 30_000)).toBe(false);
          expect(await p.extend(key, 'b', 30_000)).toBe(true);
          expect(await acq('c', { limit: 3 })).not.toBeNull();
          expect(await acq('d', { limit: 3 })).not.toBeNull();
          expect(await acq('e', { limit: 3 })).toBeNull();
          // Readers too: each frees only itself.
          const k2 = `${key}:rw`;
          expect(await acq('r1', { ...shared, key: k2 })).not.toBeNull();
          expect(await acq('r2', { ...shared, key: k2 })).not.toBeNull();
          expect(await p.release(k2, 'r1')).toBe(true);
          expect(await p.extend(k2, 'r1', 30_000)).toBe(false);
          expect(await p.extend(k2, 'r2', 30_000)).toBe(true);
          expect(await acq('w', { key: k2 })).toBeNull();
        });

        test('an exclusive request with another limit throws LockOptionsError naming both, while the key is held and while it is only awaited', async () => {
          expect(await acq('a', { limit: 2 })).not.toBeNull();
          for (const o of [{ limit: 3 }, {}, { limit: 3, wait: true, waitTimeout: 1_000 }]) {
            const err = await rejection(() => acq('b', o));
            expect(err).toBeInstanceOf(LockOptionsError);
            expect(err.message).toContain(key);
            expect(err.message).toMatch(/\b2\b/);
            expect(err.message).toMatch(o.limit === 3 ? /\b3\b/ : /\b1\b/);
            expect(err.message).toMatch(/same limit/i);
          }
          expect(await acq('b', { limit: 2 })).not.toBeNull(); // the refused calls took nothing
          // Only awaited: readers hold, a writer of limit 2 waits.
          const k2 = `${key}:awaited`;
          expect(await acq('r', { ...shared, key: k2 })).not.toBeNull();
          const w = waitFor('w', { key: k2, limit: 2 });
          await sleep(200);
          const err = await rejection(() => acq('x', { key: k2, limit: 3 }));
          expect(err).toBeInstanceOf(LockOptionsError);
          expect(err.message).toMatch(/\b2\b/);
          expect(err.message).toMatch(/\b3\b/);
          expect(await acq('r2', { ...shared, key: k2 })).toBeNull(); // shared carries no limit: no error, queued behind the writer
          expect(await p.release(k2, 'r')).toBe(true);
          expect(await w.promise).not.toBeNull();
        });

        test('shared holders hold together; plain and exclusive requests are refused while any remains, and shared ones while an exclusive holds', async () => {
          expect(await acq('r1', shared)).not.toBeNull();
          expect(await acq('r2', shared)).not.toBeNull();
          expect(await acq('plain')).toBeNull();
          expect(await acq('sem', { limit: 2 })).toBeNull();
          expect(await p.release(key, 'r1')).toBe(true);
          expect(await acq('plain')).toBeNull();
          expect(await p.release(key, 'r2')).toBe(true);
          expect(await acq('plain')).not.toBeNull(); // a plain lock is the write lock
          expect(await acq('r3', shared)).toBeNull();
          expect(await p.release(key, 'plain')).toBe(true);
          expect(await acq('s1', { limit: 2 })).not.toBeNull();
          expect(await acq('r3', shared)).toBeNull(); // a semaphore permit is exclusive too
        });

        test('a queued exclusive waiter is not overtaken by later shared callers (no writer starvation)', async () => {
          expect(await acq('r1', shared)).not.toBeNull();
          const w = waitFor('writer');
          await sleep(200);
          expect(await acq('r2', shared)).toBeNull();
          const r3 = waitFor('r3', shared);
          await sleep(200);
          expect(await p.release(key, 'r1')).toBe(true);
          expect(await w.promise).not.toBeNull();
          await sleep(200);
          expect(r3.done).toBe(false);
          expect(await p.release(key, 'writer')).toBe(true);
          expect(await r3.promise).not.toBeNull();
        });

        test('consecutive shared waiters at the head enter together on an exclusive release; the writer behind them waits for both', async () => {
          expect(await acq('x')).not.toBeNull();
          const r1 = waitFor('r1', shared);
          await sleep(100);
          const r2 = waitFor('r2', shared);
          await sleep(100);
          const w = waitFor('w');
          await sleep(100);
          const r3 = waitFor('r3', shared);
          await sleep(200);
          expect(await p.release(key, 'x')).toBe(true);
          expect(await r1.promise).not.toBeNull();
          expect(await r2.promise).not.toBeNull();
          await sleep(200);
          expect([w.done, r3.done]).toEqual([false, false]);
          expect(await p.release(key, 'r1')).toBe(true);
          await sleep(200);
          expect(w.done).toBe(false);
          expect(await p.release(key, 'r2')).toBe(true);
          expect(await w.promise).not.toBeNull();
          await sleep(200);
          expect(r3.done).toBe(false);
          expect(await p.release(key, 'w')).toBe(true);
          expect(await r3.promise).not.toBeNull();
        });

        test('fencing tokens strictly increase across modes and permits', async () => {
          const phases: number[][] = [];
          const grant = async (g: Promise<LockGrant | null> | LockGrant | null) => (await g)!.fencingToken;
          phases.push([await grant(acq('r1', shared)), await grant(acq('r2', shared))]);
          await p.release(key, 'r1');
          await p.release(key, 'r2');
          phases.push([await grant(acq('plain'))]);
          await p.release(key, 'plain');
          phases.push([await grant(acq('s1', { limit: 2 })), await grant(acq('s2', { limit: 2 }))]);
          const sw = waitFor('s3', { limit: 2 });
          await sleep(100);
          await p.release(key, 's1');
          phases.push([await grant(sw.promise)]);
          await p.release(key, 's2');
          await p.release(key, 's3');
          expect(await acq('x')).not.toBeNull();
          const r3 = waitFor('r3', shared);
          const r4 = waitFor('r4', shared);
          await sleep(200);
          await p.release(key, 'x');
          phases.push([await grant(r3.promise), await grant(r4.promise)]);
          const flat = phases.flat();
          expect(new Set(flat).size).toBe(flat.length);
          for (let i = 1; i < phases.length; i++) expect(Math.min(...phases[i])).toBeGreaterThan(Math.max(...phases[i - 1]));
          expect(phases[0][1]).toBeGreaterThan(phases[0][0]);
          expect(phases[2][1]).toBeGreaterThan(phases[2][0]);
        });

        test('a wait that times out or is aborted leaves the queue, and the compatible waiters behind it enter at once', async () => {
          // Readers hold; a writer waits in front of a reader; the writer gives up: the reader joins the holders.
          for (const how of ['timeout', 'abort'] as const) {
            const k = `${key}:${how}`;
            const ac = new AbortController();
            expect(await acq('r1', { ...shared, key: k })).not.toBeNull();
            const w = waitFor('w', how === 'timeout' ? { key: k, waitTimeout: 500 } : { key: k, signal: ac.signal });
            await sleep(100);
            const r2 = waitFor('r2', { ...shared, key: k });
            await sleep(100);
            if (how === 'abort') setTimeout(() => ac.abort(), 300);
            expect(await w.promise).toBeNull();
            expect(await r2.promise).not.toBeNull();
            expect(await p.extend(k, 'r1', 30_000)).toBe(true); // the reader that held all along still holds
          }
          // A semaphore: the waiter that gave up is skipped by the next release.
          const k = `${key}:sem`;
          expect(await acq('a', { key: k, limit: 1 })).not.toBeNull();
          const gaveUp = waitFor('gave-up', { key: k, limit: 1, waitTimeout: 300 });
          await sleep(100);
          const next = waitFor('next', { key: k, limit: 1 });
          expect(await gaveUp.promise).toBeNull();
          await p.release(k, 'a');
          expect(await next.promise).not.toBeNull();
          expect(await p.extend(k, 'gave-up', 30_000)).toBe(false);
        });

        test('many concurrent callers of a semaphore and of a read/write name: never more inside than allowed, each once', async () => {
          let inside = 0;
          let maxInside = 0;
          await Promise.all(
            Array.from({ length: 10 }, async (_, i) => {
              const g = await acq(`c${i}`, { limit: 3, wait: true, waitTimeout: 20_000 });
              expect(g).not.toBeNull();
              maxInside = Math.max(maxInside, ++inside);
              await sleep(20);
              inside--;
              expect(await p.release(key, `c${i}`)).toBe(true);
            }),
          );
          expect(maxInside).toBe(3);
          const k = `${key}:rw`;
          let readers = 0;
          let writers = 0;
          const broken: string[] = [];
          await Promise.all(
            Array.from({ length: 10 }, async (_, i) => {
              const write = i % 3 === 0;
              const g = await acq(`m${i}`, { key: k, wait: true, waitTimeout: 20_000, ...(write ? {} : shared) });
              expect(g).not.toBeNull();
              if (write) writers++;
              else readers++;
              if (writers > 1 || (writers === 1 && readers > 0)) broken.push(`m${i}: ${writers} writers, ${readers} readers`);
              await sleep(20);
              if (write) writers--;
              else readers--;
              expect(await p.release(k, `m${i}`)).toBe(true);
            }),
          );
          expect(broken).toEqual([]);
        });

        test('inspect lists one entry per holder, with its mode and permits', async () => {
          const prefix = `${key}:`;
          for (const o of ['a', 'b']) expect(await acq(o, { key: `${prefix}sem`, limit: 3 })).not.toBeNull();
          for (const o of ['r1', 'r2', 'r3']) expect(await acq(o, { ...shared, key: `${prefix}rw` })).not.toBeNull();
          expect(await acq('p', { key: `${prefix}plain` })).not.toBeNull();
          const w = waitFor('w', { key: `${prefix}rw` });
          await sleep(300);
          const { locks } = await inspectAll(prefix);
          const view = locks.map((l) => `${l.key.slice(prefix.length)} ${l.owner} ${l.mode ?? 'exclusive'} ${l.permits} ${l.waiters}`).sort();
          expect(view).toEqual([
            'plain p exclusive 1 0',
            'rw r1 shared 1 1',
            'rw r2 shared 1 1',
            'rw r3 shared 1 1',
            'sem a exclusive 3 0',
            'sem b exclusive 3 0',
          ]);
          for (const l of locks) expect(l.remainingMs).toBeGreaterThan(10_000);
          for (const o of ['r1', 'r2', 'r3']) expect(await p.release(`${prefix}rw`, o)).toBe(true);
          expect(await w.promise).not.toBeNull();
          const after = (await inspectAll(`${prefix}rw`)).locks;
          expect(after.map((l) => [l.owner, l.mode ?? 'exclusive', l.waiters])).toEqual([['w', 'exclusive', 0]]);
        });

        test('inspect gives each group holder its own fencing token and since when it holds', async () => {
          const k = `${key}:since:sem`;
          const before = Date.now();
          const a = await acq('a', { key: k, limit: 3 });
          await sleep(1_200);
          const b = await acq('b', { key: k, limit: 3 });
          const r = await acq('r', { ...shared, key: `${key}:since:rw` });
          const { locks } = await inspectAll(`${key}:since:`);
          const of = (owner: string) => locks.find((l) => l.owner === owner)!;
          expect(of('a').fencingToken).toBe(a!.fencingToken);
          expect(of('b').fencingToken).toBe(b!.fencingToken);
          expect(of('r').fencingToken).toBe(r!.fencingToken);
          // Wide margins: the store's clock and this process's, and a loaded machine.
          expect(Math.abs(of('a').heldSince! - before)).toBeLessThan(1_000);
          expect(of('b').heldSince! - of('a').heldSince!).toBeGreaterThanOrEqual(700);
          expect(of('r').heldSince).toBeGreaterThanOrEqual(of('a').heldSince!);
          for (const [name, o] of [
            [k, 'a'],
            [k, 'b'],
            [`${key}:since:rw`, 'r'],
          ])
            expect(await p.release(name, o)).toBe(true);
        });

        test('the peer (another connection) sees the same permits, readers and limit, and its waiter is woken by a release here', async () => {
          const q = target.peer ?? p;
          expect(await acq('a', { limit: 2 })).not.toBeNull();
          expect(await acq('b', { limit: 2 }, q)).not.toBeNull();
          expect(await acq('c', { limit: 2 }, q)).toBeNull();
          expect(await rejection(() => acq('c', { limit: 5 }, q))).toBeInstanceOf(LockOptionsError);
          const w = waitFor('w', { limit: 2 }, q);
          await sleep(200);
          const started = Date.now();
          expect(await p.release(key, 'a')).toBe(true);
          expect(await w.promise).not.toBeNull();
          expect(Date.now() - started).toBeLessThan(5_000);
          expect(await p.release(key, 'b')).toBe(true); // released here, taken there: one key
          const k = `${key}:rw`;
          expect(await acq('r1', { ...shared, key: k })).not.toBeNull();
          expect(await acq('r2', { ...shared, key: k }, q)).not.toBeNull();
          expect(await acq('x', { key: k }, q)).toBeNull();
          expect(await p.release(k, 'r2')).toBe(true);
          expect(await q.release(k, 'r1')).toBe(true);
          expect(await acq('x', { key: k }, q)).not.toBeNull();
        });
      });
    }

    if (options.acquireMany === false) {
      test('has no acquireMany (the engine takes several names one by one)', () => {
        expect(p.acquireMany).toBeUndefined();
      });
    } else {
      describe('acquireMany: several plain locks in one call, all or none', () => {
        const many = (keys: string[], owner: string, ttl = 30_000, q: LockProvider = p) => {
          if (!q.acquireMany) throw new Error(`${label} has no acquireMany; pass { acquireMany: false } to the conformance suite`);
          return q.acquireMany(keys.map((k) => ({ key: k, owner: `${owner}:${k}`, ttl })));
        };

        test('takes every free key: one grant per key, in order, each token above the earlier grants of its key', async () => {
          const keys = [`${key}:1`, `${key}:2`, `${key}:3`];
          const before = (await take(keys[1], 'early'))!.fencingToken;
          expect(await p.release(keys[1], 'early')).toBe(true);
          const grants = await many(keys, 'a');
          expect(grants).toHaveLength(3);
          for (const g of grants!) expect(typeof g.fencingToken).toBe('number');
          expect(grants![1].fencingToken).toBeGreaterThan(before);
          for (const k of keys) expect(await take(k, 'other')).toBeNull();
          // Each key is then a single lock of its own.
          expect(await take(keys[1], 'after')).toBeNull();
          expect(await p.release(keys[1], `a:${keys[1]}`)).toBe(true);
          const after = await take(keys[1], 'after');
          expect(after!.fencingToken).toBeGreaterThan(grants![1].fencingToken);
          expect(await p.extend(keys[0], `a:${keys[0]}`, 30_000)).toBe(true);
          expect(await p.extend(keys[0], 'other', 30_000)).toBe(false);
          expect(await p.release(keys[0], `a:${keys[0]}`)).toBe(true);
          expect(await p.release(keys[2], `a:${keys[2]}`)).toBe(true);
          expect(await take(keys[0], 'c')).not.toBeNull();
          expect(await take(keys[2], 'c')).not.toBeNull();
        });

        test('all or none: when one key is held, answers null and takes none of them', async () => {
          const keys = [`${key}:1`, `${key}:2`, `${key}:3`];
          expect(await take(keys[2], 'b')).not.toBeNull();
          expect(await many(keys, 'a')).toBeNull();
          expect(await take(keys[0], 'c')).not.toBeNull();
          expect(await take(keys[1], 'c')).not.toBeNull();
          expect(await p.release(keys[2], 'b')).toBe(true);
          expect(await many([`${key}:4`, keys[2]], 'a')).toHaveLength(2);
          expect(await many([keys[0], `${key}:5`], 'a')).toBeNull();
          expect(await take(`${key}:5`, 'c')).not.toBeNull();
        });

        test('a key with a waiter queued is not free: the batch does not overtake the queue', async () => {
          const keys = [`${key}:1`, `${key}:2`];
          expect(await take(keys[1], 'b', 300)).not.toBeNull();
          const waiting = p.acquire({ key: keys[1], owner: 'w', ttl: 30_000, wait: true, waitTimeout: 10_000 });
          await sleep(50);
          expect(await many(keys, 'a')).toBeNull();
          expect(await take(keys[0], 'c')).not.toBeNull();
          expect(await waiting).not.toBeNull();
          expect(await p.release(keys[1], 'w')).toBe(true);
        });

        test('each lease is set: keys taken with a short ttl are free after it, unless extended', async () => {
          const keys = [`${key}:1`, `${key}:2`];
          expect(await many(keys, 'a', 300)).toHaveLength(2);
          expect(await p.extend(keys[0], `a:${keys[0]}`, 10_000)).toBe(true);
          await sleep(700);
          expect(await take(keys[0], 'c')).toBeNull();
          expect(await take(keys[1], 'c')).not.toBeNull();
        });

        test('fences: with fenceBlocks each grant reserves its block, and the next grant of that key draws above it', async () => {
          const keys = [`${key}:1`, `${key}:2`];
          const grants = await p.acquireMany!(keys.map((k) => ({ key: k, owner: 'a', ttl: 30_000, fences: 16 })));
          const block = p.fenceBlocks ? 16 : 1;
          expect(grants!.map((g) => g.fences ?? 1)).toEqual([block, block]);
          for (const k of keys) expect(await p.release(k, 'a')).toBe(true);
          for (const [i, k] of keys.entries()) expect((await take(k, 'b'))!.fencingToken).toBeGreaterThanOrEqual(grants![i].fencingToken + block);
        });
      });
    }

    test('ping answers with a round-trip time', async () => {
      const ms = await p.ping();
      expect(typeof ms).toBe('number');
      expect(ms).toBeGreaterThanOrEqual(0);
    });

    test('extendMany answers per lock, in order, as extend would (owner-checked), and really sets each lease', async () => {
      expect(typeof p.extendMany).toBe('function');
      const mine = Array.from({ length: 30 }, (_, i) => `${key}:mine:${i}`);
      for (const k of mine) expect(await take(k, 'a', 2_000)).not.toBeNull();
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
      expect(answers).toEqual([...mine.map(() => true), false, false, false, true]);
      expect(await p.extendMany!([])).toEqual([]);
      await sleep(2_300);
      // Past the first leases: the extended keys are still held, the one owned by b (not extended) and the shortened one are free.
      for (const k of mine) expect(await take(k, 'c')).toBeNull();
      expect(await take(`${key}:other`, 'c')).not.toBeNull();
      expect(await take(`${key}:short`, 'c')).not.toBeNull();
      expect(await take(`${key}:free`, 'c')).not.toBeNull();
      expect(
        await p.extendMany!([
          { key: mine[0], owner: 'c', ttl: 10_000 },
          { key: mine[1], owner: 'a', ttl: 10_000 },
        ]),
      ).toEqual([false, true]);
      for (const k of mine) expect(await p.release(k, 'a')).toBe(true);
    });

    describe('a holder whose process does not run past its lease (through LockManager)', () => {
      /** What its LockLostError says: why the lease ended, that the process was not running, and for how long after the end. */
      const NOT_RUNNING = /the lease ran out while this process was not running .*: it ran again \d+ ms after the end of the lease/;
      const silent = { debug() {}, warn() {}, error() {} };
      const managers: LockManager[] = [];
      const manager = (q: LockProvider = p): LockManager => {
        const m = new LockManager({ provider: q, logger: silent });
        managers.push(m);
        return m;
      };
      afterEach(async () => {
        for (const m of managers.splice(0)) await m.close();
      });

      test.each([false, true])(
        'a blocked event loop (renew: %s): the first synchronous read after it says not held, the signal read before it is aborted, another instance gets a higher token',
        async (renew) => {
          const name = token();
          const h = await manager().acquire(name, { ttl: 300, renew });
          const signal = h.signal;
          const end = performance.now() + 700;
          while (performance.now() < end); // as a long synchronous task, a GC pause or SIGSTOP would
          expect(signal.aborted).toBe(true);
          expect(h.held).toBe(false);
          expect(() => signal.throwIfAborted()).toThrow(LockLostError);
          expect((signal.reason as Error).message).toMatch(NOT_RUNNING);
          const other = await manager(target.peer ?? p).tryAcquire(name);
          expect(other).not.toBeNull();
          expect(other!.fencingToken).toBeGreaterThan(h.fencingToken);
          expect(await h.release()).toBe(false); // lost, not released: the new holder keeps the lock
          expect(other!.held).toBe(true);
          expect(await other!.release()).toBe(true);
        },
      );

      test.each([false, true])(
        'a child process stopped with SIGSTOP past its lease (renew: %s) while another process takes the lock: on SIGCONT its first synchronous reads say not held and aborted; the other holder has a higher token',
        async (renew) => {
          const store = target.child;
          const name = token();
          const resume = join(tmpdir(), `nest-lock-resume-${token()}`);
          const child = spawnFixture(new URL('./fixtures/paused-holder.js', import.meta.url), { store, name, ttl: 1_000, renew, resume });
          const lines = new ChildLines(child);
          try {
            const held = Number(await lines.next('held'));
            child.kill('SIGSTOP');
            const resumeAt = performance.now() + 2_500; // well past the child's 1 s lease
            // Another process (this one) takes the lock while the holder is stopped; the in-memory store is the child's own.
            const other = store.kind === 'memory' ? undefined : await manager(target.peer ?? p).acquire(name, { ttl: 30_000, waitTimeout: 15_000 });
            await sleep(resumeAt - performance.now());
            writeFileSync(resume, '');
            child.kill('SIGCONT');
            const seen = JSON.parse(await lines.next('resumed')) as Record<string, unknown>;
            expect(seen).toEqual({ aborted: true, currentHeld: false, held: false, threw: 'LockLostError', reason: expect.stringMatching(NOT_RUNNING) });
            const otherToken = other ? other.fencingToken : Number(await lines.next('other'));
            expect(otherToken).toBeGreaterThan(held);
            if (other) expect(other.held).toBe(true);
          } finally {
            child.kill('SIGKILL');
            rmSync(resume, { force: true });
          }
        },
        60_000,
      );
    });
  });
}
