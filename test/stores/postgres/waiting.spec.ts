/** PostgreSQL-specific waiting behaviour, beyond the shared conformance suite. */
import { LockManager } from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { POSTGRES_URL, sql, twoProcesses, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueTable('wait');

describe('PostgresLockProvider waiting', () => {
  const { a, b } = twoProcesses(table);

  test('a lease shortened by extend (holdAtLeast) wakes waiters at its new end, not the old one', async () => {
    expect(await a.acquire({ key: 'short', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const started = Date.now();
    const local = a.acquire({ key: 'short', owner: 'local', ttl: 30_000, wait: true, waitTimeout: 20_000 });
    await sleep(150);
    const remote = b.acquire({ key: 'short', owner: 'remote', ttl: 30_000, wait: true, waitTimeout: 20_000 });
    await sleep(300);
    expect(await a.extend('short', 'h', 500)).toBe(true);
    const first = await Promise.race([local.then(() => 'local'), remote.then(() => 'remote')]);
    expect(first).toBe('local'); // it queued first
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await a.release('short', 'local')).toBe(true);
    expect(await remote).toEqual(expect.objectContaining({ queued: true }));
    expect(await b.release('short', 'remote')).toBe(true);
  });

  test("a fresh instance's first wait takes its place in line on arrival, ahead of a warm instance that arrives a few ms later", async () => {
    // warm has waited before (its LISTEN connection is open); each round's cold instance has taken a lock without
    // waiting (its pooled connection has run the statement), but has never waited: no LISTEN connection yet.
    // (A connection's first statements cost more, planning and catalog lookups, whatever this library does; see
    // the README on the order of waiters.)
    const options = { connection: POSTGRES_URL, tableName: table };
    const warm = new PostgresLockProvider(options);
    expect(
      await warm.acquire({ key: 'warm-up', owner: 'w', ttl: 1_000, wait: true, waitTimeout: 1_000 }),
    ).not.toBeNull();
    const firsts: string[] = [];
    for (let round = 0; round < 6; round++) {
      const key = `cold-first:${round}`;
      const cold = new PostgresLockProvider(options);
      try {
        expect(await cold.acquire({ key: `${key}:try`, owner: 'try', ttl: 1_000, wait: false })).not.toBeNull();
        expect(await a.acquire({ key, owner: 'holder', ttl: 30_000, wait: false })).not.toBeNull();
        const order: string[] = [];
        const coldWait = cold
          .acquire({ key, owner: 'cold', ttl: 30_000, wait: true, waitTimeout: 20_000 })
          .then((g) => order.push('cold') && g);
        await sleep(8);
        const warmWait = warm
          .acquire({ key, owner: 'warm', ttl: 30_000, wait: true, waitTimeout: 20_000 })
          .then((g) => order.push('warm') && g);
        await sleep(400);
        expect(await a.release(key, 'holder')).toBe(true);
        const winner = await Promise.race([coldWait.then(() => 'cold'), warmWait.then(() => 'warm')]);
        firsts.push(winner);
        if (winner === 'cold') {
          expect(await cold.release(key, 'cold')).toBe(true);
          expect(await warmWait).not.toBeNull();
          await warm.release(key, 'warm');
        } else {
          expect(await warm.release(key, 'warm')).toBe(true);
          expect(await coldWait).not.toBeNull();
          await cold.release(key, 'cold');
        }
      } finally {
        await cold.close();
      }
    }
    await warm.close();
    expect(firsts).toEqual(firsts.map(() => 'cold'));
  });

  test("a release while a fresh instance's LISTEN connection opens is not missed", async () => {
    for (let round = 0; round < 4; round++) {
      const key = `cold-release:${round}`;
      const cold = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table });
      try {
        await cold.ping();
        expect(await a.acquire({ key, owner: 'holder', ttl: 30_000, wait: false })).not.toBeNull();
        const started = Date.now();
        const waiting = cold.acquire({ key, owner: 'cold', ttl: 30_000, wait: true, waitTimeout: 20_000 });
        // Released at once: likely before the waiter's LISTEN is in place.
        setTimeout(() => void a.release(key, 'holder'), round * 3);
        expect(await waiting).not.toBeNull();
        expect(Date.now() - started).toBeLessThan(5_000); // not the holder's 30 s lease
        await cold.release(key, 'cold');
      } finally {
        await cold.close();
      }
    }
  });

  test('FIFO across providers: waiters from two "processes" are served in arrival order', async () => {
    expect(await a.acquire({ key: 'fifo', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const order: string[] = [];
    const providers = [b, a, b, a, b];
    const waits = providers.map(async (p, i) => {
      await sleep(120 * i);
      const owner = `w${i}`;
      expect(await p.acquire({ key: 'fifo', owner, ttl: 30_000, wait: true, waitTimeout: 20_000 })).not.toBeNull();
      order.push(owner);
      await sleep(30);
      expect(await p.release('fifo', owner)).toBe(true);
    });
    await sleep(120 * providers.length + 200);
    // A newcomer that does not wait sees the queue: the lock is not free for it.
    expect(await b.acquire({ key: 'fifo', owner: 'newcomer', ttl: 1_000, wait: false })).toBeNull();
    await a.release('fifo', 'h');
    await Promise.all(waits);
    expect(order).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
  });

  test('the queue entry of a waiter that crashed holds the queue back only until its lease ends', async () => {
    expect(await a.acquire({ key: 'crashed-waiter', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    // What a waiter leaves behind when its process dies: a ticket nobody renews (here with a 1.5 s lease).
    await sql(
      `INSERT INTO "${table}_waiters" (name, owner, expires_at) VALUES ('crashed-waiter', 'dead', clock_timestamp() + interval '1500 ms')`,
    );
    const started = Date.now();
    const waiting = b.acquire({ key: 'crashed-waiter', owner: 'alive', ttl: 30_000, wait: true, waitTimeout: 15_000 });
    await sleep(200);
    expect(await a.release('crashed-waiter', 'h')).toBe(true);
    expect(await waiting).not.toBeNull();
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(1_200);
    expect(waited).toBeLessThan(5_000);
  });

  test('a lock granted after a wait longer than its ttl is held and renewed (the lease counts from the grant)', async () => {
    const manager = new LockManager({ provider: b });
    expect(await a.acquire({ key: 'lock:long-wait', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    setTimeout(() => void a.release('lock:long-wait', 'h'), 900);
    const lock = await manager.acquire('long-wait', { ttl: 500, waitTimeout: 10_000 });
    await sleep(1_000);
    expect(lock.held).toBe(true);
    expect(await a.acquire({ key: 'lock:long-wait', owner: 'thief', ttl: 1_000, wait: false })).toBeNull();
    expect(await lock.release()).toBe(true);
    await manager.close();
  });

  test('a waiter that gives up leaves the queue: the next one, in another process, is not held back by it', async () => {
    expect(await a.acquire({ key: 'giveup', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const ac = new AbortController();
    const first = a.acquire({ key: 'giveup', owner: 'quitter', ttl: 30_000, wait: true, signal: ac.signal });
    await sleep(150);
    const second = b.acquire({ key: 'giveup', owner: 'next', ttl: 30_000, wait: true, waitTimeout: 10_000 });
    await sleep(150);
    ac.abort();
    expect(await first).toBeNull();
    await sleep(100);
    const releasedAt = Date.now();
    expect(await a.release('giveup', 'h')).toBe(true);
    expect(await second).not.toBeNull();
    expect(Date.now() - releasedAt).toBeLessThan(2_000); // its queue entry would otherwise live for seconds
  });
});
