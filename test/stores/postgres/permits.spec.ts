/**
 * Semaphores (`limit`) and shared locks on PostgreSQL, beyond the shared
 * conformance suite: a permit of a killed process comes back after its own
 * lease; waiters of two providers (two pools, two LISTEN connections, as two
 * processes) are woken by releases in arrival order; a table of the previous
 * shape is upgraded, and refused with the migration to run under
 * `createTable: false`.
 */
import { spawn } from 'node:child_process';
import { LockStoreError } from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { compiledScript } from '../../support/paths.js';
import { dropLockTables, POSTGRES_URL, sql, twoProcesses, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';

const table = uniqueTable('permits');

describe('PostgresLockProvider semaphores and shared locks', () => {
  // Their queue entries' leases (2 × commandTimeout) outlast the waits, so that only a release (or a holder's lease end) wakes a waiter.
  const { a, b } = twoProcesses(table, { commandTimeout: 15_000 });

  test('a semaphore holder killed with SIGKILL gives its permit back after its lease, and not before; the other holder keeps its own', async () => {
    const ttl = 3_000;
    const child = spawn(
      process.execPath,
      [compiledScript(new URL('./fixtures/pg-permit-holder.js', import.meta.url))],
      {
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          PG_URL: POSTGRES_URL,
          PG_TABLE: table,
          KEY: 'crash',
          LIMIT: '2',
          TTL: String(ttl),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const held = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.trim());
        });
        child.once('exit', (code) => reject(new Error(`the child exited (${code}) before holding a permit`)));
      });
      const childToken = Number(held.split(' ')[1]);
      expect(await a.acquire({ key: 'crash', owner: 'mine', ttl: 60_000, wait: false, limit: 2 })).not.toBeNull();
      expect(await a.acquire({ key: 'crash', owner: 'third', ttl: 60_000, wait: false, limit: 2 })).toBeNull();
      await sleep(1_200); // at least one renewal went through
      child.kill('SIGKILL');
      await exited;
      const killedAt = Date.now();
      expect(await b.acquire({ key: 'crash', owner: 'probe', ttl: 1_000, wait: false, limit: 2 })).toBeNull();
      // Nobody releases: the wait ends when the child's own lease does.
      const grant = await b.acquire({
        key: 'crash',
        owner: 'heir',
        ttl: 60_000,
        wait: true,
        waitTimeout: 15_000,
        limit: 2,
      });
      const waited = Date.now() - killedAt;
      expect(grant).not.toBeNull();
      expect(grant!.fencingToken).toBeGreaterThan(childToken);
      // The last renewal was at most ttl/3 (+ slack) before the kill: the lease ends 2–3 s after it.
      expect(waited).toBeGreaterThanOrEqual(ttl * (2 / 3) - 300);
      expect(waited).toBeLessThan(ttl + 3_000);
      expect(await a.extend('crash', 'mine', 60_000)).toBe(true);
      const holders = (await a.inspect({ prefix: 'crash', limit: 10 })).locks;
      expect(holders.map((l) => l.owner).sort()).toEqual(['heir', 'mine']);
      expect(holders.every((l) => l.permits === 2 && l.mode === 'exclusive')).toBe(true);
    } finally {
      child.kill('SIGKILL');
      await Promise.all([a.release('crash', 'mine'), b.release('crash', 'heir')]);
    }
  }, 40_000);

  test('semaphore waiters of two providers are each woken by a release, in arrival order', async () => {
    const key = 'sem-order';
    const ttl = 60_000; // no lease ends during the test: only releases can wake the waiters
    expect(await a.acquire({ key, owner: 'h1', ttl, wait: false, limit: 2 })).not.toBeNull();
    expect(await b.acquire({ key, owner: 'h2', ttl, wait: false, limit: 2 })).not.toBeNull();
    const granted: string[] = [];
    const waiters = (['w1', 'w2', 'w3', 'w4'] as const).map((owner, i) => ({ owner, provider: i % 2 === 0 ? a : b }));
    const waits: Array<Promise<unknown>> = [];
    for (const { owner, provider } of waiters) {
      waits.push(
        provider
          .acquire({ key, owner, ttl, wait: true, waitTimeout: 25_000, limit: 2 })
          .then((g) => g && granted.push(owner)),
      );
      await sleep(150); // arrival order
    }
    const started = Date.now();
    const releaseAndSee = async (provider: PostgresLockProvider, owner: string, next: string[]): Promise<void> => {
      expect(await provider.release(key, owner)).toBe(true);
      for (let i = 0; i < 100 && granted.length < next.length; i++) await sleep(20);
      await sleep(200); // nobody else enters
      expect(granted).toEqual(next);
    };
    await sleep(200);
    expect(granted).toEqual([]);
    await releaseAndSee(a, 'h1', ['w1']);
    await releaseAndSee(b, 'h2', ['w1', 'w2']);
    await releaseAndSee(a, 'w1', ['w1', 'w2', 'w3']);
    await releaseAndSee(b, 'w2', ['w1', 'w2', 'w3', 'w4']);
    await Promise.all(waits);
    expect(Date.now() - started).toBeLessThan(10_000);
    await Promise.all([a.release(key, 'w3'), b.release(key, 'w4')]);
  }, 30_000);

  test('read/write across two providers: a waiting writer is not overtaken by later readers, which then enter together', async () => {
    const key = 'rw-order';
    const ttl = 60_000;
    expect(await a.acquire({ key, owner: 'r0', ttl, wait: false, mode: 'shared' })).not.toBeNull();
    const granted: string[] = [];
    const writer = b
      .acquire({ key, owner: 'w', ttl, wait: true, waitTimeout: 25_000 })
      .then((g) => g && granted.push('w'));
    await sleep(150);
    const readers = [
      a
        .acquire({ key, owner: 'r1', ttl, wait: true, waitTimeout: 25_000, mode: 'shared' })
        .then((g) => g && granted.push('r1')),
      b
        .acquire({ key, owner: 'r2', ttl, wait: true, waitTimeout: 25_000, mode: 'shared' })
        .then((g) => g && granted.push('r2')),
    ];
    await sleep(300);
    expect(granted).toEqual([]); // the readers queue behind the writer, though a reader holds
    expect(await b.acquire({ key, owner: 'late', ttl, wait: false, mode: 'shared' })).toBeNull();
    expect(await a.release(key, 'r0')).toBe(true);
    await writer;
    await sleep(200);
    expect(granted).toEqual(['w']);
    expect(await b.release(key, 'w')).toBe(true);
    await Promise.all(readers);
    expect(granted.slice(1).sort()).toEqual(['r1', 'r2']);
    const page = await a.inspect({ prefix: key, limit: 10 });
    expect(page.locks.map((l) => [l.owner, l.mode, l.permits])).toEqual([
      [expect.any(String), 'shared', 1],
      [expect.any(String), 'shared', 1],
    ]);
    await Promise.all([a.release(key, 'r1'), b.release(key, 'r2')]);
  }, 30_000);

  test('extendMany renews plain locks, permits and shared holds together, each owner-checked', async () => {
    expect(await a.acquire({ key: 'many:plain', owner: 'p', ttl: 1_000, wait: false })).not.toBeNull();
    expect(await a.acquire({ key: 'many:sem', owner: 's', ttl: 1_000, wait: false, limit: 2 })).not.toBeNull();
    expect(await a.acquire({ key: 'many:rw', owner: 'r', ttl: 1_000, wait: false, mode: 'shared' })).not.toBeNull();
    const answers = await a.extendMany([
      { key: 'many:plain', owner: 'p', ttl: 30_000 },
      { key: 'many:sem', owner: 's', ttl: 30_000 },
      { key: 'many:rw', owner: 'r', ttl: 30_000 },
      { key: 'many:sem', owner: 'not-a-holder', ttl: 30_000 },
    ]);
    expect(answers).toEqual([true, true, true, false]);
    await sleep(1_500); // past the first leases: the renewed ones hold
    const page = await b.inspect({ prefix: 'many:', limit: 10 });
    expect(page.locks.map((l) => [l.key, l.owner])).toEqual([
      ['many:plain', 'p'],
      ['many:rw', 'r'],
      ['many:sem', 's'],
    ]);
    expect(page.locks.every((l) => l.remainingMs > 20_000)).toBe(true);
    await Promise.all([a.release('many:plain', 'p'), a.release('many:sem', 's'), a.release('many:rw', 'r')]);
  });

  test('a table of the previous shape: createTable: false names the migration; after schemaSql() its lock stays held and semaphores work', async () => {
    const own = `${table}_prev`;
    // The tables as the version before semaphores and shared locks created them, with a lock held and a waiter queued.
    await sql(`CREATE TABLE "${own}" (name text PRIMARY KEY, owner text, fencing_token bigint NOT NULL, expires_at timestamptz NOT NULL, acquired_at timestamptz);
      CREATE TABLE "${own}_waiters" (ticket bigserial PRIMARY KEY, name text NOT NULL, owner text NOT NULL, expires_at timestamptz NOT NULL);
      CREATE INDEX "${own}_waiters_name_idx" ON "${own}_waiters" (name, ticket);
      INSERT INTO "${own}" VALUES ('held', 'someone', 7, now() + interval '1 minute', now());
      INSERT INTO "${own}_waiters" (name, owner, expires_at) VALUES ('held', 'queued', now() + interval '1 minute')`);
    const strict = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: own, createTable: false });
    try {
      const outdated = /created by an older version and lacks a column: run PostgresLockProvider\.schemaSql\(\) again/;
      for (const call of [
        () => strict.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false }),
        () => strict.acquire({ key: 'k', owner: 'a', ttl: 1_000, wait: false, mode: 'shared' }),
        () => strict.ping(),
      ]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(LockStoreError);
        expect((err as Error).message).toMatch(outdated);
      }
      await sql(PostgresLockProvider.schemaSql(own));
      // The lock held before the upgrade stays held, for every mode; its queued waiter is an exclusive one of limit 1.
      expect(await strict.acquire({ key: 'held', owner: 'b', ttl: 1_000, wait: false })).toBeNull();
      expect(await strict.acquire({ key: 'held', owner: 'b', ttl: 1_000, wait: false, mode: 'shared' })).toBeNull();
      await expect(strict.acquire({ key: 'held', owner: 'b', ttl: 1_000, wait: false, limit: 2 })).rejects.toThrow(
        /limit 1/,
      );
      expect(await strict.inspect({ prefix: 'held', limit: 10 })).toEqual({
        locks: [
          expect.objectContaining({
            key: 'held',
            owner: 'someone',
            permits: 1,
            mode: 'exclusive',
            fencingToken: 7,
            waiters: 1,
          }),
        ],
      });
      expect(await strict.acquire({ key: 'sem', owner: 'x1', ttl: 30_000, wait: false, limit: 2 })).not.toBeNull();
      expect(await strict.acquire({ key: 'sem', owner: 'x2', ttl: 30_000, wait: false, limit: 2 })).not.toBeNull();
      expect(await strict.acquire({ key: 'sem', owner: 'x3', ttl: 30_000, wait: false, limit: 2 })).toBeNull();
      expect(await strict.ping()).toBeGreaterThanOrEqual(0);
    } finally {
      await strict.close();
      await dropLockTables(own);
    }
  });
});
