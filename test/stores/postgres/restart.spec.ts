/**
 * PostgresLockProvider through real database restarts, against a server of
 * the test's own (the machine's shared PostgreSQL is never stopped): an
 * immediate stop (a crash) while a lock is held and callers wait, a start on
 * the same port with the same providers (no app restart), and a
 * `pg_ctl restart -m fast` while idle.
 */
import { LockAcquireError, LockLostError, LockManager, LockStoreError, type LockHandle } from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { PostgresServer } from '../../support/postgres-server.js';
import { sleep } from '../../support/sleep.js';

const commandTimeout = 1_000;
/** Every store call must fail within this (commandTimeout 1000 ms; a wide margin). */
const BOUND = 5_000;
const ttl = 1_500;

/** Expects `p` to reject with LockStoreError within `maxMs` of `from`. */
async function storeErrorWithin(p: Promise<unknown>, maxMs = BOUND, from = Date.now()): Promise<LockStoreError> {
  const err = await p.then(
    (v) => new Error(`resolved with ${JSON.stringify(v)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LockStoreError);
  expect(Date.now() - from).toBeLessThan(maxMs);
  return err as LockStoreError;
}

let server: PostgresServer;
const providers: PostgresLockProvider[] = [];
const make = () => {
  const p = new PostgresLockProvider({ connection: server.url, tableName: 'restart_locks', commandTimeout });
  providers.push(p);
  return p;
};

beforeAll(async () => {
  server = await PostgresServer.create();
}, 60_000);
afterAll(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await server?.cleanup();
}, 30_000);

describe('PostgresLockProvider across a restart of its own PostgreSQL server', () => {
  // Two app instances on the same database; neither is restarted in this file.
  let a: PostgresLockProvider;
  let b: PostgresLockProvider;
  let ma: LockManager;
  let mb: LockManager;
  /** The highest fencing token of lock "held" granted so far (before the restart under test). */
  let tokenBefore = 0;

  beforeAll(() => {
    a = make();
    b = make();
    ma = new LockManager({ provider: a });
    mb = new LockManager({ provider: b });
  });

  test('locking works against the own server', async () => {
    expect(await ma.withLock('warmup', () => 'ran')).toBe('ran');
    const first = await ma.acquire('held', { ttl: 5_000 });
    expect(await mb.tryAcquire('held')).toBeNull();
    const waiting = mb.acquire('held', { ttl: 5_000, waitTimeout: 5_000 });
    await sleep(200);
    const releasedAt = Date.now();
    expect(await first.release()).toBe(true);
    const second = await waiting;
    expect(Date.now() - releasedAt).toBeLessThan(2_000);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect(await second.release()).toBe(true);
  });

  test('stopped (immediate) while a lock is held and callers wait: LockStoreError within the bound, the held lock is lost after its lease', async () => {
    const held: LockHandle = await ma.acquire('held', { ttl });
    tokenBefore = held.fencingToken;
    const lost = new Promise<number>((r) => held.signal.addEventListener('abort', () => r(Date.now()), { once: true }));
    // Waiters in the other instance: one without, one with a waitTimeout far longer than the outage.
    const waiter = mb.acquire('held', { ttl: 5_000 });
    const patient = mb.acquire('held', { ttl: 5_000, waitTimeout: 20_000 });
    await sleep(300); // queued, LISTEN connected

    await server.stop({ mode: 'immediate' });
    const stoppedAt = Date.now();

    // A wait ends with the store's error as soon as the store fails (one retry, 250 ms later), not at
    // its waitTimeout: it is never turned into LockAcquireError ("held") nor left hanging.
    await storeErrorWithin(waiter, BOUND, stoppedAt);
    expect(await storeErrorWithin(patient, BOUND, stoppedAt)).not.toBeInstanceOf(LockAcquireError);

    // Every call fails with LockStoreError within the bound while the database is away.
    await storeErrorWithin(mb.tryAcquire('other'));
    await storeErrorWithin(mb.acquire('other', { waitTimeout: 10_000 }));
    let ran = false;
    await storeErrorWithin(mb.withLock('other', () => (ran = true)));
    expect(ran).toBe(false);
    await storeErrorWithin(held.extend());
    await storeErrorWithin(a.extend('lock:held', 'someone', 1_000));
    await storeErrorWithin(a.release('lock:held', 'someone'));
    await storeErrorWithin(b.ping());

    // The held lock: renewal fails, and once its lease ends the signal aborts with LockLostError.
    const lostAt = await lost;
    expect(held.signal.reason).toBeInstanceOf(LockLostError);
    expect(held.held).toBe(false);
    expect(lostAt - stoppedAt).toBeLessThan(ttl + 3_000);
    // release() never throws: the lock is already lost, and the store is away.
    const releaseStarted = Date.now();
    expect(await held.release()).toBe(false);
    expect(Date.now() - releaseStarted).toBeLessThan(BOUND);
    await sleep(Math.max(0, stoppedAt + ttl + 200 - Date.now())); // the outage outlasts the lease
  }, 30_000);

  test('started again on the same port (same providers, no app restart): acquire works, fencing tokens go on rising, release wakes a waiter', async () => {
    await server.start();

    // The first call of each instance works: the pool replaced the connections the crash ended.
    expect(await b.ping()).toBeLessThan(BOUND);
    // b's successful call also removes the queue entries of its two waiters that the outage failed (they could
    // not be removed while the database was away). Without a call from b they would hold newcomers back until
    // their queue lease lapses (max(5 s, 2 x commandTimeout) after their last renewal), as for a crashed waiter.
    const startedAt = Date.now();
    const again = await ma.acquire('held', { ttl: 30_000, waitTimeout: 10_000 });
    expect(Date.now() - startedAt).toBeLessThan(2_000);
    // The row (and its counter) survived the crash: the token is higher than every one before the restart.
    expect(again.fencingToken).toBeGreaterThan(tokenBefore);
    // b's LISTEN connection died with the server: a new wait listens again, and the release's NOTIFY reaches it.
    const waiting = mb.acquire('held', { ttl: 5_000, waitTimeout: 20_000 });
    await sleep(300);
    const releasedAt = Date.now();
    expect(await again.release()).toBe(true);
    const next = await waiting;
    expect(Date.now() - releasedAt).toBeLessThan(3_000); // woken by NOTIFY, long before the 30 s lease would end
    expect(next.fencingToken).toBeGreaterThan(again.fencingToken);
    tokenBefore = next.fencingToken;
    await next.extend();
    expect(await next.release()).toBe(true);
    expect(await b.ping()).toBeLessThan(BOUND);
  }, 30_000);

  test('pg_ctl restart -m fast while idle: the next calls work at once', async () => {
    // The restart ends every idle pool connection and b's LISTEN connection (FATAL 57P01). pg-pool drops an idle
    // connection on its error, which arrives while pg_ctl is still restarting, and the provider's listener
    // reconnects at the next waiting call. So the first call after the restart already works: the provider does
    // not retry, and none of the calls below may fail with LockStoreError.
    await server.restart({ mode: 'fast' });
    const lock = await ma.tryAcquire('held', { ttl: 30_000 });
    expect(lock).not.toBeNull();
    expect(lock!.fencingToken).toBeGreaterThan(tokenBefore);
    tokenBefore = lock!.fencingToken;
    expect(await mb.tryAcquire('held')).toBeNull();
    const waiting = mb.acquire('held', { ttl: 5_000, waitTimeout: 20_000 });
    await sleep(300);
    await lock!.extend();
    const releasedAt = Date.now();
    expect(await lock!.release()).toBe(true);
    const next = await waiting;
    expect(Date.now() - releasedAt).toBeLessThan(3_000); // by NOTIFY on b's new LISTEN connection
    expect(next.fencingToken).toBeGreaterThan(tokenBefore);
    expect(await next.release()).toBe(true);
    expect(await a.ping()).toBeLessThan(BOUND);
  }, 30_000);
});
