/**
 * PostgresLockProvider.prune(): rows of locks whose lease ended long ago go
 * away, rows in use stay, and a pruned name's next tokens are still greater
 * (a new row's counter starts from the database clock).
 */
import { LockOptionsError, MAX_DURATION_MS } from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';

const table = uniqueTable('prune');
const provider = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table });
const take = (key: string, owner: string) => provider.acquire({ key, owner, ttl: 10_000, wait: false });
const names = async (): Promise<string[]> =>
  ((await sql(`SELECT name FROM "${table}" ORDER BY name`)) as Array<{ name: string }>).map((r) => r.name);

afterAll(async () => {
  await provider.close();
  await dropLockTables(table);
});

test('a new name starts its tokens from the database clock in microseconds', async () => {
  const before = Date.now() * 1000;
  const grant = await take('fresh', 'a');
  expect(grant!.fencingToken).toBeGreaterThan(before - 60_000_000); // the database clock, give or take a minute
  expect(Number.isSafeInteger(grant!.fencingToken)).toBe(true);
  const next = await take('fresh', 'a'); // held by a: nothing
  expect(next).toBeNull();
  await provider.release('fresh', 'a');
  expect((await take('fresh', 'b'))!.fencingToken).toBe(grant!.fencingToken + 1);
  await provider.release('fresh', 'b');
});

test('prune deletes rows whose lease ended long ago, keeps the others, and the pruned names keep increasing tokens', async () => {
  const old = await take('old-released', 'a');
  await provider.release('old-released', 'a');
  await take('old-abandoned', 'a'); // its holder "crashed": never released
  await take('held', 'a');
  await take('recent', 'a');
  await provider.release('recent', 'a');
  await take('ahead', 'a');
  await provider.release('ahead', 'a');
  // Three of them were created three hours ago and ended two hours ago, as far as the database can tell
  // (their counters, seeded from the clock then, are three hours behind it).
  const ageRows = (names: string) =>
    sql(
      `UPDATE "${table}" SET expires_at = clock_timestamp() - interval '2 hours', fencing_token = fencing_token - 3 * 3600 * 1000000::bigint
       WHERE name IN (${names})`,
    );
  await ageRows(`'old-released', 'old-abandoned', 'ahead'`);
  const oldToken = old!.fencingToken - 3 * 3600 * 1_000_000;
  // ...but one counter is ahead of the clock (set by hand, say): deleting its row would let tokens go down.
  await sql(
    `UPDATE "${table}" SET fencing_token = (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + 3600000000 WHERE name = 'ahead'`,
  );

  expect(await provider.prune()).toBe(2);
  expect(await names()).toEqual(expect.arrayContaining(['held', 'recent', 'ahead']));
  expect(await names()).not.toEqual(expect.arrayContaining(['old-released']));
  expect(await names()).not.toEqual(expect.arrayContaining(['old-abandoned']));
  expect(await provider.prune()).toBe(0);

  // The held lock is still held, and its owner can release it.
  expect(await take('held', 'b')).toBeNull();
  expect(await provider.release('held', 'a')).toBe(true);
  // A pruned name comes back above every token it gave before.
  const again = await take('old-released', 'c');
  expect(again!.fencingToken).toBeGreaterThan(oldToken);
  expect(again!.fencingToken).toBeGreaterThan(old!.fencingToken); // and above the clock the old row started from
  await provider.release('old-released', 'c');
});

test('prune works in batches and takes a custom age', async () => {
  await sql(
    `INSERT INTO "${table}" (name, owner, fencing_token, expires_at)
     SELECT 'bulk:' || i, NULL, 1, clock_timestamp() - interval '10 minutes' FROM generate_series(1, 12000) AS i`,
  );
  expect(await provider.prune()).toBe(0); // ended 10 minutes ago: younger than an hour
  expect(await provider.prune(5 * 60_000)).toBe(12_000);
});

test('prune refuses an age under a minute', async () => {
  await expect(provider.prune(1_000)).rejects.toThrow(LockOptionsError);
  await expect(provider.prune(Number.NaN)).rejects.toThrow(/olderThanMs/);
});

test('prune refuses an age over MAX_DURATION_MS (was a store error: interval out of range), and takes MAX_DURATION_MS itself', async () => {
  await expect(provider.prune(1e20)).rejects.toThrow(LockOptionsError);
  await expect(provider.prune(MAX_DURATION_MS + 1)).rejects.toThrow(
    /PostgresLockProvider\.prune: olderThanMs must be a finite number of milliseconds >= 60000 and at most 2147483647/,
  );
  expect(await provider.prune(MAX_DURATION_MS)).toBe(0);
});
