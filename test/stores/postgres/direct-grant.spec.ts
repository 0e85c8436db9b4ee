/** A plain lock's release grants the key to the first live waiter in line, whose process starts without another statement. */
import type { QueryResultRow } from 'pg';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { sql, twoProcesses, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueTable('direct');

/** The statements a provider runs (by their text's first words), counted through its database. */
function countStatements(provider: PostgresLockProvider): string[] {
  const seen: string[] = [];
  const database = (
    provider as unknown as { database: { query: (text: string, values?: unknown[]) => Promise<QueryResultRow[]> } }
  ).database;
  const query = database.query.bind(database);
  database.query = (text, values) => {
    seen.push(text.includes('INSERT INTO') && text.includes('ahead AS') ? 'acquire' : text.slice(0, 30));
    return query(text, values);
  };
  return seen;
}

describe('PostgresLockProvider: direct grant by release', () => {
  const { a, b } = twoProcesses(table);

  test('the waiter of another process is granted by the release itself: no statement of its own, the next tokens, a lease of at most the waiter lease', async () => {
    const held = await a.acquire({ key: 'd1', owner: 'h', ttl: 30_000, wait: false, fences: 16 });
    expect(held).not.toBeNull();
    const statements = countStatements(b);
    const waiting = b.acquire({
      key: 'd1',
      owner: 'w',
      ttl: 30_000,
      wait: true,
      waitTimeout: 10_000,
      fences: 16,
      renews: true,
    });
    await sleep(300);
    expect(statements.filter((s) => s === 'acquire').length).toBeGreaterThanOrEqual(1); // its queueing statement (and a look again: a cold instance's first wait)
    statements.splice(0);
    const releasedAt = performance.now();
    expect(await a.release('d1', 'h')).toBe(true);
    const grant = await waiting;
    const answeredAt = performance.now();
    expect(grant).toEqual(
      expect.objectContaining({ fencingToken: held!.fencingToken + 16, fences: 16, queued: true, leaseMs: 5_000 }),
    );
    // The lease started at the release, which the waiter bounds from below on its own clock.
    expect(grant!.leaseStartedAt).toBeLessThanOrEqual(answeredAt);
    expect(grant!.leaseStartedAt).toBeGreaterThan(releasedAt - 1_000);
    expect(statements.filter((s) => s === 'acquire')).toEqual([]); // none after the release
    expect(await b.holder('d1')).toEqual(expect.objectContaining({ owner: 'w' }));
    expect(await b.extend('d1', 'w', 30_000)).toBe(true);
    expect(await b.release('d1', 'w')).toBe(true);
  });

  test('a waiter whose lease the engine does not renew is granted directly only when its whole ttl fits the waiter lease', async () => {
    for (const [ttl, direct] of [
      [3_000, true],
      [30_000, false],
    ] as const) {
      const key = `d6:${ttl}`;
      expect(await a.acquire({ key, owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
      const waiting = b.acquire({ key, owner: 'w', ttl, wait: true, waitTimeout: 10_000 });
      await sleep(300);
      const statements = countStatements(b);
      expect(await a.release(key, 'h')).toBe(true);
      const grant = await waiting;
      expect(grant).not.toBeNull();
      // Direct: the whole ttl as its lease, no statement; else it asks itself, and its lease is the ttl from its own statement.
      expect(grant!.leaseMs).toBe(direct ? ttl : undefined);
      expect(statements.filter((s) => s === 'acquire')).toHaveLength(direct ? 0 : 1);
      expect(await b.release(key, 'w')).toBe(true);
    }
  });

  test('a waiter whose process died after taking its ticket holds the line only for the short lease a release gives it', async () => {
    expect(await a.acquire({ key: 'd2', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    // What a waiter of a newer instance leaves behind when its process dies: a live ticket that asks for a direct grant of 800 ms.
    await sql(
      `INSERT INTO "${table}_waiters" (name, owner, expires_at, grant_ms, fences) VALUES ('d2', 'dead', clock_timestamp() + interval '5 s', 800, 1)`,
    );
    const waiting = b.acquire({ key: 'd2', owner: 'alive', ttl: 30_000, wait: true, waitTimeout: 10_000 });
    await sleep(200);
    const releasedAt = Date.now();
    expect(await a.release('d2', 'h')).toBe(true);
    expect(await a.holder('d2')).toEqual(expect.objectContaining({ owner: 'dead' }));
    expect(await waiting).not.toBeNull(); // woken when that lease lapsed
    const waited = Date.now() - releasedAt;
    expect(waited).toBeGreaterThanOrEqual(700);
    expect(waited).toBeLessThan(3_000);
    expect(await b.release('d2', 'alive')).toBe(true);
  });

  test('a lapsed queue entry is skipped: the release grants the next live waiter', async () => {
    expect(await a.acquire({ key: 'd3', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    await sql(
      `INSERT INTO "${table}_waiters" (name, owner, expires_at, grant_ms, fences) VALUES ('d3', 'dead', clock_timestamp() - interval '1 s', 5000, 1)`,
    );
    const waiting = b.acquire({ key: 'd3', owner: 'alive', ttl: 30_000, wait: true, waitTimeout: 10_000 });
    await sleep(200);
    const releasedAt = Date.now();
    expect(await a.release('d3', 'h')).toBe(true);
    expect(await waiting).not.toBeNull();
    expect(Date.now() - releasedAt).toBeLessThan(1_000);
    expect(await b.release('d3', 'alive')).toBe(true);
  });

  test('a waiter that left while a release granted it gives the key back: the removal of its entry finds it granted, and it releases', async () => {
    expect(await a.acquire({ key: 'd4', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const [entry] = await sql<{ ticket: string }>(
      `INSERT INTO "${table}_waiters" (name, owner, expires_at, grant_ms, fences) VALUES ('d4', 'quitter', clock_timestamp() + interval '5 s', 5000, 1) RETURNING ticket::text`,
    );
    expect(await a.release('d4', 'h')).toBe(true);
    expect(await a.holder('d4')).toEqual(expect.objectContaining({ owner: 'quitter' }));
    // The quitter's process removes its entry (as on timeout or abort), too late: the entry is gone with the grant.
    const waiting = (b as unknown as { waiting: { drop(e: object[]): Promise<void> } }).waiting;
    await waiting.drop([{ ticket: entry.ticket, key: 'd4', owner: 'quitter' }]);
    expect(await a.holder('d4')).toBeNull();
    expect(await a.acquire({ key: 'd4', owner: 'next', ttl: 30_000, wait: false })).not.toBeNull();
    expect(await a.release('d4', 'next')).toBe(true);
  });

  test('a waiter of an older instance (no grant_ms in its entry) is notified and asks itself', async () => {
    expect(await a.acquire({ key: 'd5', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const waiting = b.acquire({ key: 'd5', owner: 'old', ttl: 30_000, wait: true, waitTimeout: 10_000 });
    await sleep(200);
    // (as an older instance's queueing statement leaves it)
    await sql(`UPDATE "${table}_waiters" SET grant_ms = NULL, fences = NULL WHERE name = 'd5'`);
    const statements = countStatements(b);
    expect(await a.release('d5', 'h')).toBe(true);
    const grant = await waiting;
    expect(grant).not.toBeNull();
    expect(grant!.leaseMs).toBeUndefined(); // the full ttl, from its own statement
    expect(statements.filter((s) => s === 'acquire')).toHaveLength(1);
    expect(await b.release('d5', 'old')).toBe(true);
  });
});
