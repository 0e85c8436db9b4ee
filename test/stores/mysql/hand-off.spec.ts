/**
 * The local hand-off capabilities of MysqlLockProvider: a grant reserves a
 * block of fencing tokens (`fenceBlocks`), a release and the next waiter of
 * the process go as one statement (`coalesce`, statements/release-pass.sql),
 * and a semaphore's permit is handed over in one transaction (`transfer`).
 */
import mysql from 'mysql2';
import { LockManager } from '../../../lib/index.js';
import type { LockAcquireRequest, LockGrant } from '../../../lib/contract/lock-provider.js';
import { MysqlLockProvider } from '../../../lib/stores/mysql/index.js';
import { dropMysqlLockTables, MYSQL_URL, mysqlQuery, uniqueMysqlTable } from '../../support/mysql-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueMysqlTable('handoff');
const pool = mysql.createPool({ uri: MYSQL_URL, connectionLimit: 4 });
/** Statements the app's pool sent for `mine` (every lock statement goes through `pool.execute`). */
let statements = 0;
const execute = pool.execute.bind(pool) as (...args: unknown[]) => unknown;
(pool as unknown as { execute: (...args: unknown[]) => unknown }).execute = (...args: unknown[]) => {
  statements++;
  return execute(...args);
};
const mine = new MysqlLockProvider({ connection: pool, tableName: table });
const other = new MysqlLockProvider({ connection: MYSQL_URL, tableName: table });

const plain = (key: string, owner: string, extra: Partial<LockAcquireRequest> = {}): LockAcquireRequest => ({
  key,
  owner,
  ttl: 30_000,
  wait: true,
  waitTimeout: 10_000,
  fences: 16,
  renews: true,
  ...extra,
});

/** The engine's coalesced call: `holder` releases `key`, then the process's next waiter, `next`, queues for it. */
function releaseThenQueue(key: string): { released: Promise<boolean>; next: Promise<LockGrant | null> } {
  let released!: Promise<boolean>;
  let next!: Promise<LockGrant | null>;
  mine.coalesce(() => {
    released = mine.release(key, 'holder');
    next = mine.acquire(plain(key, 'next'));
  });
  return { released, next };
}

/** Live queue entries of `key`. */
const queued = async (key: string): Promise<number> =>
  Number(
    (
      await mysqlQuery<Array<{ n: number }>>(
        `SELECT COUNT(*) AS n FROM \`${table}_waiters\` WHERE name = ? AND expires_at > UTC_TIMESTAMP(6)`,
        [key],
      )
    )[0].n,
  );

afterAll(async () => {
  await Promise.all([mine.close(), other.close()]);
  await new Promise<void>((resolve) => pool.end(() => resolve()));
  await dropMysqlLockTables(table);
});

test('it declares fenceBlocks, coalesce and transfer', () => {
  expect(mine.fenceBlocks).toBe(true);
  expect(typeof mine.coalesce).toBe('function');
  expect(typeof mine.transfer).toBe('function');
});

/** Fencing tokens a test grant reserves: 1,000 s of the database clock in µs, so the next grant's token is above the clock. */
const BLOCK = 1_000_000_000;

test('a plain grant reserves the block of fencing tokens asked for: the next grant of the name draws above the whole block', async () => {
  for (const key of ['fresh-name', 'fresh-name']) {
    const first = await mine.acquire(plain(key, 'a', { wait: false, fences: BLOCK }));
    expect(first).toEqual(expect.objectContaining({ fences: BLOCK }));
    expect(await mine.release(key, 'a')).toBe(true);
    const second = await other.acquire(plain(key, 'b', { fences: undefined }));
    expect(second!.fencingToken).toBe(first!.fencingToken + BLOCK);
    expect(second!.fences ?? 1).toBe(1);
    expect(await other.release(key, 'b')).toBe(true);
    const third = await other.acquire(plain(key, 'c', { wait: false, fences: 1 }));
    expect(third!.fencingToken).toBe(second!.fencingToken + 1);
    expect(await other.release(key, 'c')).toBe(true);
  }
  // A waiter's grant (after queueing) reserves its block too.
  const held = await other.acquire(plain('queued-block', 'x', { wait: false }));
  const waiting = mine.acquire(plain('queued-block', 'y', { fences: BLOCK }));
  while ((await queued('queued-block')) === 0) await sleep(10);
  expect(await other.release('queued-block', 'x')).toBe(true);
  const got = await waiting;
  expect(got).toEqual(expect.objectContaining({ fences: BLOCK, queued: true }));
  expect(got!.fencingToken).toBeGreaterThan(held!.fencingToken);
  expect(await mine.release('queued-block', 'y')).toBe(true);
  const after = await other.acquire(plain('queued-block', 'z', { wait: false }));
  expect(after!.fencingToken).toBe(got!.fencingToken + BLOCK);
  // A shared hold or a permit reserves none.
  const shared = await mine.acquire({ ...plain('shared-block', 's', { wait: false }), mode: 'shared' });
  expect(shared!.fences ?? 1).toBe(1);
});

test('through the engine, the callers of one process hand the lock over in turn with the next tokens of the block', async () => {
  const manager = new LockManager({ provider: mine, ttl: 30_000 });
  const tokens: number[] = [];
  await Promise.all(
    [0, 1, 2, 3].map(() =>
      manager.withLock('turns', (lock) => void tokens.push(lock.fencingToken), { onHeld: 'wait' }),
    ),
  );
  tokens.sort((a, b) => a - b);
  expect(tokens.slice(1).map((t, i) => t - tokens[i])).toEqual([1, 1, 1]);
  await manager.close();
});

test('coalesced, with nobody else waiting: the next waiter takes the name the release frees, in the same statement', async () => {
  const held = await mine.acquire(plain('c1', 'holder', { wait: false }));
  statements = 0;
  const { released, next } = releaseThenQueue('c1');
  expect(await released).toBe(true);
  const got = await next;
  expect(got).toEqual(expect.objectContaining({ fences: 16 }));
  expect(got!.fencingToken).toBeGreaterThanOrEqual(held!.fencingToken + 16);
  expect(statements).toBe(1);
  expect(await other.holder('c1')).toEqual(expect.objectContaining({ owner: 'next' }));
  expect(await mine.release('c1', 'next')).toBe(true);
});

test('coalesced, with a waiter of another process queued: the release frees the name for it, and the next waiter queues behind it', async () => {
  const held = await mine.acquire(plain('c2', 'holder', { wait: false }));
  const theirs = other.acquire(plain('c2', 'theirs'));
  while ((await queued('c2')) === 0) await sleep(10);
  const { released, next } = releaseThenQueue('c2');
  expect(await released).toBe(true);
  const their = await theirs;
  expect(their!.fencingToken).toBeGreaterThanOrEqual(held!.fencingToken + 16);
  const order: string[] = [];
  void next.then(() => order.push('next'));
  await sleep(300);
  order.push('theirs releases');
  expect(await other.release('c2', 'theirs')).toBe(true);
  const got = await next;
  expect(got).toEqual(expect.objectContaining({ queued: true }));
  expect(got!.fencingToken).toBeGreaterThanOrEqual(their!.fencingToken + 16);
  expect(order).toEqual(['theirs releases', 'next']);
  expect(await mine.release('c2', 'next')).toBe(true);
});

test('coalesced, a release whose lease ended: it answers false and the next waiter asks as usual', async () => {
  const held = await mine.acquire(plain('c3', 'holder', { wait: false, ttl: 50 }));
  await sleep(150);
  const { released, next } = releaseThenQueue('c3');
  expect(await released).toBe(false);
  expect((await next)!.fencingToken).toBeGreaterThanOrEqual(held!.fencingToken + 16);
  expect(await mine.release('c3', 'next')).toBe(true);
});

test('coalesced calls that do not pair up go as usual: a release alone, a wait for another name, a try', async () => {
  await mine.acquire(plain('c4', 'holder', { wait: false }));
  let released!: Promise<boolean>;
  let elsewhere!: Promise<LockGrant | null>;
  let tried!: Promise<LockGrant | null>;
  expect(
    mine.coalesce(() => {
      released = mine.release('c4', 'holder');
      elsewhere = mine.acquire(plain('c5', 'next'));
      tried = mine.acquire(plain('c4', 'try', { wait: false }));
      return 'sent';
    }),
  ).toBe('sent');
  expect(await released).toBe(true);
  expect(await elsewhere).not.toBeNull();
  await tried;
  expect(mine.coalesce(() => 7)).toBe(7);
  await mine.release('c4', 'try');
  expect(await mine.release('c5', 'next')).toBe(true);
});

test('transfer hands a permit to a new owner with a larger token, the holder count unchanged and the queue passed over; null once the old owner holds none', async () => {
  const key = 'permits';
  const ask = (owner: string, wait = false): LockAcquireRequest => ({ ...plain(key, owner, { wait }), limit: 2 });
  const first = await mine.acquire(ask('p1'));
  const second = await mine.acquire(ask('p2'));
  const waiting = other.acquire(ask('p3', true));
  while ((await queued(key)) === 0) await sleep(10);
  const moved = await mine.transfer(key, 'p1', 'p4', 10_000);
  expect(moved!.fencingToken).toBeGreaterThan(Math.max(first!.fencingToken, second!.fencingToken));
  expect((await mine.inspect({ prefix: key, limit: 10 })).locks.map((l) => l.owner).sort()).toEqual(['p2', 'p4']);
  expect(await queued(key)).toBe(1);
  // The old owner holds nothing: its extend, release and a second transfer answer so.
  expect(await mine.extend(key, 'p1', 10_000)).toBe(false);
  expect(await mine.release(key, 'p1')).toBe(false);
  expect(await mine.transfer(key, 'p1', 'p5', 10_000)).toBeNull();
  expect(await mine.extend(key, 'p4', 10_000)).toBe(true);
  // The new owner's release frees the permit for the queued waiter.
  expect(await mine.release(key, 'p4')).toBe(true);
  expect((await waiting)!.fencingToken).toBeGreaterThan(moved!.fencingToken);
  expect(await other.release(key, 'p3')).toBe(true);
  expect(await mine.release(key, 'p2')).toBe(true);
});
