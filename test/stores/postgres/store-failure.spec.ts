/**
 * Store failures of PostgresLockProvider: an unreachable or silent database,
 * a statement stuck behind a row lock, connections the server drops, close().
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { LockManager, LockStoreError } from '../../../lib/index.js';
import { PostgresLockProvider } from '../../../lib/stores/postgres/index.js';
import { dropLockTables, POSTGRES_URL, sql, uniqueTable } from '../../support/pg-test-env.js';
import { sleep } from '../../support/sleep.js';
import { describeUnreachableStore, storeErrorWithin } from '../../support/unreachable-store.js';

const table = uniqueTable('fail');

/** Retries `fn` a few times: after dropped connections, the first call may fail with LockStoreError. */
async function eventually<T>(fn: () => Promise<T>, tries = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof LockStoreError) || i >= tries) throw err;
      await sleep(200);
    }
  }
}

const terminate = (app: string) =>
  sql<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1`,
    [app],
  );
const backends = async (app: string) =>
  (await sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`, [app]))[0].n;

afterAll(() => dropLockTables(table));

describeUnreachableStore(
  'PostgresLockProvider',
  (port, commandTimeout) =>
    new PostgresLockProvider({
      connection: `postgres://postgres@127.0.0.1:${port}/test`,
      tableName: table,
      commandTimeout,
    }),
);

describe('PostgresLockProvider against a live database', () => {
  const providers: PostgresLockProvider[] = [];
  const make = (app: string, commandTimeout = 2_000) => {
    const p = new PostgresLockProvider({
      connection: { connectionString: POSTGRES_URL, application_name: app },
      tableName: table,
      commandTimeout,
    });
    providers.push(p);
    return p;
  };
  afterAll(async () => {
    await Promise.all(providers.map((p) => p.close()));
  });

  test('a statement stuck behind a row lock fails with LockStoreError within the bound, and locking works after', async () => {
    const p = make(`nl-stuck-${process.pid}`, 1_000);
    expect(await p.acquire({ key: 'lock:stuck', owner: 'a', ttl: 100, wait: false })).not.toBeNull();
    await sleep(200);
    const blocker = new pg.Client({ connectionString: POSTGRES_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${table}" WHERE name = 'lock:stuck' FOR UPDATE`);
      await storeErrorWithin(p.acquire({ key: 'lock:stuck', owner: 'b', ttl: 5_000, wait: false }), 2_500);
      await blocker.query('ROLLBACK');
    } finally {
      await blocker.end();
    }
    expect(
      await eventually(() => p.acquire({ key: 'lock:stuck', owner: 'c', ttl: 5_000, wait: false })),
    ).not.toBeNull();
  }, 20_000);

  test('dropped connections (pg_terminate_backend): a queued waiter is still woken by a release elsewhere, and locking works after', async () => {
    const holderApp = `nl-holder-${process.pid}`;
    const waiterApp = `nl-waiter-${process.pid}`;
    const holder = make(holderApp);
    const waiter = make(waiterApp);
    expect(await holder.acquire({ key: 'lock:dropped', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const waiting = waiter.acquire({ key: 'lock:dropped', owner: 'w', ttl: 30_000, wait: true, waitTimeout: 20_000 });
    await sleep(500);
    expect(await backends(waiterApp)).toBeGreaterThanOrEqual(2); // pool + LISTEN connection
    expect((await terminate(waiterApp))[0].n).toBeGreaterThanOrEqual(2);
    await sleep(1_000); // the LISTEN connection reconnects
    expect(await backends(waiterApp)).toBeGreaterThanOrEqual(1);
    const releasedAt = Date.now();
    expect(await eventually(() => holder.release('lock:dropped', 'h'))).toBe(true);
    const grant = await waiting.catch((e: unknown) => e);
    if (process.env.DEBUG_PG_TEST) console.log('waiter after dropped connections:', grant);
    if (grant instanceof LockStoreError) {
      // Allowed by the contract; then the key must be free for a new attempt.
      expect(
        await eventually(() => waiter.acquire({ key: 'lock:dropped', owner: 'w2', ttl: 30_000, wait: false })),
      ).not.toBeNull();
    } else {
      expect(grant).toEqual(expect.objectContaining({ queued: true }));
      expect(Date.now() - releasedAt).toBeLessThan(5_000); // by NOTIFY on the new connection, not the 30 s lease
    }
    // And the provider keeps working.
    expect(
      await eventually(() => waiter.acquire({ key: 'lock:dropped:after', owner: 'x', ttl: 5_000, wait: false })),
    ).not.toBeNull();
    expect(await waiter.release('lock:dropped:after', 'x')).toBe(true);
  }, 30_000);

  test('a held lock survives dropped connections: renewal goes on over new ones', async () => {
    const app = `nl-renew-${process.pid}`;
    const manager = new LockManager({ provider: make(app, 1_000) });
    const lock = await manager.acquire('renewed', { ttl: 1_500 });
    for (let i = 0; i < 3; i++) {
      await sleep(600);
      await terminate(app);
    }
    await sleep(1_500);
    expect(lock.held).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    const other = make(`nl-renew-other-${process.pid}`);
    expect(await other.acquire({ key: 'lock:renewed', owner: 'thief', ttl: 1_000, wait: false })).toBeNull();
    expect(await lock.release()).toBe(true);
    await manager.close();
  }, 20_000);

  test('close() resolves queued waiters null, ends the LISTEN connection and the pool it owns', async () => {
    const app = `nl-close-${process.pid}`;
    const holder = make(`nl-close-holder-${process.pid}`);
    const p = new PostgresLockProvider({
      connection: { connectionString: POSTGRES_URL, application_name: app },
      tableName: table,
    });
    expect(await holder.acquire({ key: 'lock:close', owner: 'h', ttl: 30_000, wait: false })).not.toBeNull();
    const waiting = p.acquire({ key: 'lock:close', owner: 'w', ttl: 30_000, wait: true });
    await sleep(300);
    expect(await backends(app)).toBeGreaterThanOrEqual(2);
    await p.close();
    expect(await waiting).toBeNull();
    await sleep(200);
    expect(await backends(app)).toBe(0);
    await storeErrorWithin(p.acquire({ key: 'lock:close', owner: 'late', ttl: 1_000, wait: false }), 1_000);
    // Its queue entry is gone: a newcomer is not held back by it once the holder releases.
    expect(await holder.release('lock:close', 'h')).toBe(true);
    expect(await holder.acquire({ key: 'lock:close', owner: 'next', ttl: 1_000, wait: false })).not.toBeNull();
  }, 20_000);

  test('close() leaves an app pool open', async () => {
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
    const p = new PostgresLockProvider({ connection: pool, tableName: table });
    expect(await p.acquire({ key: 'lock:app-pool', owner: 'a', ttl: 1_000, wait: false })).not.toBeNull();
    await p.close();
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await pool.end();
  });
});

/** A TCP proxy to PostgreSQL that the test can take down and bring back: a database outage, without touching the server. */
class Outage {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(5432, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => {
          this.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as { port: number }).port;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
  }
}

describe('PostgresLockProvider through a database outage', () => {
  const outage = new Outage();
  let p: PostgresLockProvider;
  let direct: PostgresLockProvider;

  beforeAll(async () => {
    await outage.up();
    p = new PostgresLockProvider({
      connection: `postgres://postgres@127.0.0.1:${outage.port}/test`,
      tableName: table,
      commandTimeout: 1_000,
    });
    direct = new PostgresLockProvider({ connection: POSTGRES_URL, tableName: table });
  });
  afterAll(async () => {
    await p.close();
    await direct.close();
    await outage.down();
  });

  test('while the database is away: LockStoreError within the bound, waiters included; after it is back: locks and wake-ups work again', async () => {
    expect(await direct.acquire({ key: 'lock:outage', owner: 'h1', ttl: 30_000, wait: false })).not.toBeNull();
    const waiting = p.acquire({ key: 'lock:outage', owner: 'w1', ttl: 30_000, wait: true });
    await sleep(300);
    await outage.down();
    await storeErrorWithin(waiting, 4_000);
    await storeErrorWithin(p.acquire({ key: 'lock:outage:2', owner: 'a', ttl: 1_000, wait: false }), 2_500);
    await storeErrorWithin(p.ping(), 2_500);

    await outage.up();
    expect(
      await eventually(() => p.acquire({ key: 'lock:outage:2', owner: 'b', ttl: 1_000, wait: false })),
    ).not.toBeNull();
    const next = p.acquire({ key: 'lock:outage', owner: 'w2', ttl: 30_000, wait: true, waitTimeout: 20_000 });
    await sleep(300);
    const releasedAt = Date.now();
    expect(await direct.release('lock:outage', 'h1')).toBe(true);
    expect(await next).toEqual(expect.objectContaining({ queued: true }));
    // Woken by NOTIFY, and not held back by the queue entry of the waiter the outage failed.
    expect(Date.now() - releasedAt).toBeLessThan(2_000);
  }, 30_000);
});
