/**
 * What the SQL stores' background-pruning specs share: the short interval,
 * providers on tables of their own, the log they read, the live locks a run
 * must leave alone, the waiting loops, and the checks that read the same on
 * every store. Each spec brings its store (tables, old rows, triggers).
 */
import { Logger } from '@nestjs/common';
import type { LockGrant, LockProvider } from '../../lib/index.js';
import { RecordingLogger } from './recording-logger.js';
import { sleep } from './sleep.js';

/** Short interval for the tests (each wait is drawn between 0.75 s and 1.25 s). */
export const FAST_PRUNE = { prune: { everyMs: 1_000 } } as const;

/** A provider that also prunes when called (the SQL stores). */
export type PrunableProvider = LockProvider & { prune(olderThanMs?: number): Promise<number> };

/** A provider's options in these tests (the spec's store adds the connection). */
export interface PruneTestOptions {
  tableName: string;
  prune?: false | (typeof FAST_PRUNE)['prune'];
  createTable?: boolean;
}

/** One store as the shared steps see it: its providers and its lock tables' rows. */
export interface PruneTestStore<P extends PrunableProvider> {
  /** A table name of its own for one test file (and run). */
  uniqueTable(label: string): string;
  /** A provider on the test database. */
  provider(options: PruneTestOptions): P;
  /** Creates the tables as a migration would (no provider call yet, so no pruning is scheduled before the rows are in). */
  createTables(table: string): Promise<unknown>;
  /** Inserts `count` rows named `<prefix><i>` whose lease ended two hours ago and whose counters started three hours ago. */
  insertOld(table: string, prefix: string, count: number): Promise<unknown>;
  /** How many rows' names start with `prefix`. */
  countRows(table: string, prefix: string): Promise<number>;
  /** Drops the lock tables and what the spec added to them. */
  dropAll(table: string): Promise<void>;
}

/** A provider and its table. */
export interface PrunedTable<P extends PrunableProvider> {
  table: string;
  provider: P;
}

/** Records the Nest log for the file's tests (pruning reports through it), and puts the default logger back after. */
export function recordLogs(): RecordingLogger {
  const logger = new RecordingLogger();
  beforeAll(() => Logger.overrideLogger(logger));
  afterAll(() => Logger.overrideLogger(true));
  return logger;
}

/**
 * A provider (fast pruning unless `options` say otherwise) on a table of its
 * own, named after `label`; closed and its tables dropped after the enclosing
 * block's tests. Call inside a `describe`.
 */
export function prunedTable<P extends PrunableProvider>(
  store: PruneTestStore<P>,
  label: string,
  options: Omit<PruneTestOptions, 'tableName'> = FAST_PRUNE,
): PrunedTable<P> {
  const table = store.uniqueTable(label);
  const provider = store.provider({ tableName: table, ...options });
  afterAll(async () => {
    await provider.close();
    await store.dropAll(table);
  });
  return { table, provider };
}

/**
 * Two providers with fast pruning on one table, standing for two processes;
 * both closed and the tables dropped after the enclosing block's tests. Call
 * inside a `describe`.
 */
export function twoPruningProviders<P extends PrunableProvider>(
  store: PruneTestStore<P>,
  label: string,
): { table: string; a: P; b: P } {
  const table = store.uniqueTable(label);
  const a = store.provider({ tableName: table, ...FAST_PRUNE });
  const b = store.provider({ tableName: table, ...FAST_PRUNE });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await store.dropAll(table);
  });
  return { table, a, b };
}

/** Polls `check` until it is true (or fails after `ms`: wide, the machine may be loaded). */
export async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(100);
  }
}

/** Waits until no row of `table` named `old:…` is left. */
export function untilPruned<P extends PrunableProvider>(store: PruneTestStore<P>, table: string): Promise<void> {
  return eventually(async () => (await store.countRows(table, 'old:')) === 0);
}

/**
 * Fills `table` with 2 500 old rows (more than one background batch), then
 * takes the live locks a pruning run must leave alone: `held` (owner `a`), a
 * shared hold on `shared`, a semaphore permit on `permits`, and `recent`,
 * released a moment ago; and queues a waiter (owner `w`) on `held`, whose
 * acquire it returns (granted once `held` is released).
 */
export async function oldRowsAndLiveLocks<P extends PrunableProvider>(
  store: PruneTestStore<P>,
  { table, provider }: PrunedTable<P>,
): Promise<{ waiter: Promise<LockGrant | null> }> {
  await store.createTables(table);
  await store.insertOld(table, 'old:', 2_500);
  expect(await provider.acquire({ key: 'held', owner: 'a', ttl: 60_000, wait: false })).not.toBeNull();
  expect(
    await provider.acquire({ key: 'shared', owner: 'r', ttl: 60_000, wait: false, mode: 'shared' }),
  ).not.toBeNull();
  expect(await provider.acquire({ key: 'permits', owner: 'p', ttl: 60_000, wait: false, limit: 3 })).not.toBeNull();
  await provider.acquire({ key: 'recent', owner: 'a', ttl: 60_000, wait: false });
  await provider.release('recent', 'a');
  return { waiter: Promise.resolve(provider.acquire({ key: 'held', owner: 'w', ttl: 60_000, wait: true })) };
}

/** After pruning, the locks of {@link oldRowsAndLiveLocks} still work: `held` is held, and its waiter gets it when released. */
export async function expectLocksStillWork(
  provider: PrunableProvider,
  waiter: Promise<LockGrant | null>,
): Promise<void> {
  expect(await provider.acquire({ key: 'held', owner: 'b', ttl: 60_000, wait: false })).toBeNull();
  expect(await provider.release('held', 'a')).toBe(true);
  expect(await waiter).not.toBeNull();
  expect(await provider.release('held', 'w')).toBe(true);
}

/**
 * The `prune` option as a store's settings function reads it: on by default
 * (an hour, about every five minutes), `true` the same, `false` off, each
 * setting alone.
 */
export function expectPruneSettings(settings: (option: unknown) => unknown): void {
  const defaults = { olderThanMs: 3_600_000, everyMs: 300_000 };
  expect(settings(undefined)).toEqual(defaults);
  expect(settings(true)).toEqual(defaults);
  expect(settings({})).toEqual(defaults);
  expect(settings(false)).toBeNull();
  expect(settings({ olderThanMs: 86_400_000 })).toEqual({ olderThanMs: 86_400_000, everyMs: 300_000 });
  expect(settings({ everyMs: 60_000 })).toEqual({ olderThanMs: 3_600_000, everyMs: 60_000 });
}

/**
 * The `prune: false` case, the same on every store: with 100 old rows on each
 * of two tables, a provider with pruning on prunes its own, while the rows of
 * one with `prune: false` stay (two seconds more), and its `prune()` still
 * deletes them. Call at the top of a spec.
 */
export function describePruneOff<P extends PrunableProvider>(store: PruneTestStore<P>): void {
  describe('prune: false', () => {
    const off = prunedTable(store, 'pruneoff', { prune: false });
    const on = prunedTable(store, 'pruneon');

    test('leaves the old rows, while a provider with pruning on prunes its own meanwhile; prune() still works', async () => {
      await Promise.all([store.createTables(off.table), store.createTables(on.table)]);
      await Promise.all([store.insertOld(off.table, 'old:', 100), store.insertOld(on.table, 'old:', 100)]);
      await Promise.all([off.provider.ping(), on.provider.ping()]);
      await untilPruned(store, on.table);
      await sleep(2_000);
      expect(await store.countRows(off.table, 'old:')).toBe(100);
      expect(await off.provider.prune()).toBe(100);
    }, 60_000);
  });
}

/**
 * The failing-run case, the same on every store but for `failDeletes` (which
 * makes deletes on a table fail with "no deletes here"): with 10 old rows, the
 * failing runs are logged as one warning in `logger`, the rows stay, and locks
 * go on. Call at the top of a spec.
 */
export function describeFailingRun<P extends PrunableProvider>(
  store: PruneTestStore<P>,
  logger: RecordingLogger,
  failDeletes: (table: string) => Promise<unknown>,
): void {
  describe('a failing run', () => {
    const { table, provider } = prunedTable(store, 'prunefail');

    test('is logged as one warning (at most once an hour), never thrown into the app; locks go on', async () => {
      await store.createTables(table);
      await store.insertOld(table, 'old:', 10);
      await failDeletes(table);
      await provider.ping();
      await eventually(async () => logger.lines('warn', table).length > 0);
      await sleep(3_500); // about three more runs, all failing
      const warnings = logger.lines('warn', table);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(new RegExp(`Background pruning of lock table "${table}" failed .*no deletes here`));
      expect(await store.countRows(table, 'old:')).toBe(10);
      expect(await provider.acquire({ key: 'k', owner: 'a', ttl: 10_000, wait: false })).not.toBeNull();
      expect(await provider.release('k', 'a')).toBe(true);
    }, 60_000);
  });
}

/** With 50 old rows on a table of `provider`'s: a ping starts its pruning, which removes them. */
export async function expectPrunedAfterPing<P extends PrunableProvider>(
  store: PruneTestStore<P>,
  { table, provider }: PrunedTable<P>,
): Promise<void> {
  await store.createTables(table);
  await store.insertOld(table, 'old:', 50);
  await provider.ping();
  await untilPruned(store, table);
}
