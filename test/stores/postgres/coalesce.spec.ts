/**
 * `PostgresLockProvider.coalesce`: the engine's release and the queueing
 * statement of the same process's next waiter run in that order on one
 * connection of the pool, so the ticket follows the release at once; the two
 * go as one statement (statements/release-queue.sql), one commit.
 */
import pg from 'pg';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueTable('coalesce');
const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
/** Connections checked out of the app's pool (every `pool.query` checks one out too). */
let checkouts = 0;
/** Statements sent on the connections checked out of the app's pool. */
let statements = 0;
const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient> | undefined;
(pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
  checkouts++;
  const client = connect(...args);
  return client?.then((c) => {
    const counted = c as pg.PoolClient & { counted?: boolean };
    if (!counted.counted) {
      counted.counted = true;
      const query = c.query.bind(c) as (...a: unknown[]) => unknown;
      (c as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
        statements++;
        return query(...a);
      };
    }
    return c;
  });
};
const mine = new PostgresLockProvider({ connection: pool, tableName: table });
const other = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table });

/** The engine's coalesced call: `holder` releases `key`, then the process's next waiter, `next`, queues for it. */
function releaseThenQueue(key: string): { released: Promise<boolean>; next: Promise<unknown> } {
  let released!: Promise<boolean>;
  let next!: Promise<unknown>;
  mine.coalesce(() => {
    released = mine.release(key, 'holder');
    next = mine.acquire({ key, owner: 'next', ttl: 30_000, wait: true, waitTimeout: 10_000, fences: 16, renews: true });
  });
  return { released, next };
}

afterAll(async () => {
  await Promise.all([mine.close(), other.close()]);
  await pool.end();
  await dropLockTables(table);
});

test('a release and the next waiter of the process, coalesced, run in that order on one connection: the waiter queues behind the one the release granted', async () => {
  // Warm: the table exists and this process LISTENs, so no statement of a first wait comes in between.
  const warm = await mine.acquire({ key: 'warm', owner: 'x', ttl: 30_000, wait: true, waitTimeout: 5_000 });
  expect(warm).not.toBeNull();
  expect(await mine.release('warm', 'x')).toBe(true);

  const held = await mine.acquire({ key: 'c1', owner: 'holder', ttl: 30_000, wait: false, fences: 16 });
  expect(held).not.toBeNull();
  const theirs = other.acquire({
    key: 'c1',
    owner: 'theirs',
    ttl: 30_000,
    wait: true,
    waitTimeout: 10_000,
    fences: 16,
    renews: true,
  });
  await sleep(300);

  checkouts = 0;
  statements = 0;
  let released!: Promise<boolean>;
  let next!: Promise<unknown>;
  const sent = mine.coalesce(() => {
    released = mine.release('c1', 'holder');
    next = mine.acquire({
      key: 'c1',
      owner: 'next',
      ttl: 30_000,
      wait: true,
      waitTimeout: 10_000,
      fences: 16,
      renews: true,
    });
    return 'sent';
  });
  expect(sent).toBe('sent');
  expect(await released).toBe(true);
  const granted = await theirs;
  expect(granted).toEqual(expect.objectContaining({ fencingToken: held!.fencingToken + 16 }));
  await sleep(100);
  // Both went through one checkout (without coalesce: one each), as one statement.
  expect(checkouts).toBe(1);
  expect(statements).toBe(1);
  // The next waiter queued after the release had granted the key: it waits for that holder.
  const order: string[] = [];
  void next.then(() => order.push('next'));
  await sleep(200);
  order.push('theirs releases');
  expect(await other.release('c1', 'theirs')).toBe(true);
  expect(await next).toEqual(expect.objectContaining({ fencingToken: held!.fencingToken + 32 }));
  expect(order).toEqual(['theirs releases', 'next']);
  expect(await mine.release('c1', 'next')).toBe(true);
});

test('with nobody else waiting, the next waiter takes the row the release frees, in the same statement', async () => {
  const held = await mine.acquire({ key: 'c4', owner: 'holder', ttl: 30_000, wait: false, fences: 16 });
  expect(held).not.toBeNull();
  checkouts = 0;
  statements = 0;
  const { released, next } = releaseThenQueue('c4');
  expect(await released).toBe(true);
  expect(await next).toEqual(expect.objectContaining({ fencingToken: held!.fencingToken + 16 }));
  expect([checkouts, statements]).toEqual([1, 1]);
  expect(await other.holder('c4')).toEqual(expect.objectContaining({ owner: 'next' }));
  expect(await mine.release('c4', 'next')).toBe(true);
});

test('a release that finds its lease ended, coalesced: the next waiter queues and asks again at once', async () => {
  const held = await mine.acquire({ key: 'c5', owner: 'holder', ttl: 50, wait: false, fences: 16 });
  expect(held).not.toBeNull();
  await sleep(150);
  const { released, next } = releaseThenQueue('c5');
  expect(await released).toBe(false);
  expect(await next).toEqual(expect.objectContaining({ fencingToken: held!.fencingToken + 16 }));
  expect(await mine.release('c5', 'next')).toBe(true);
});

test('statements outside a coalesce each check a connection out on their own, and a coalesce with none checks out nothing', async () => {
  checkouts = 0;
  expect(mine.coalesce(() => 7)).toBe(7);
  expect(checkouts).toBe(0);
  await Promise.all([mine.holder('c2'), mine.holder('c3')]);
  expect(checkouts).toBe(2);
});
