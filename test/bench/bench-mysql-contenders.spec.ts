/**
 * Scenario 6's MySQL contenders (bench/contenders/mysql.contenders.ts) on the
 * test MariaDB: each keeps a non-atomic section exclusive across two clients,
 * and the raw poller's upsert never takes a row whose lease runs.
 */
import { randomBytes } from 'node:crypto';
import { oursMysql, rawMysql, RAW_MYSQL_TABLE } from '../../bench/contenders/mysql.contenders.js';
import type { BenchEnv, Contender } from '../../bench/contenders/contender.js';
import { MYSQL_URL, mysqlQuery } from '../support/mysql-test-env.js';

const env: BenchEnv = { redisUrl: 'redis://unused', pgUrl: 'postgres://unused', mysqlUrl: MYSQL_URL, ttl: 10_000 };
const prefix = `bench-mysql:${process.pid}:${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  await mysqlQuery(`DELETE FROM ${RAW_MYSQL_TABLE} WHERE name LIKE ?`, [`${prefix}%`]).catch(() => undefined);
  await mysqlQuery('DELETE FROM bench_nest_locks WHERE name LIKE ?', [`${prefix}%`]).catch(() => undefined);
  await mysqlQuery('DELETE FROM bench_nest_locks_waiters WHERE name LIKE ?', [`${prefix}%`]).catch(() => undefined);
});

test.each([
  [rawMysql.id, rawMysql],
  [oursMysql.id, oursMysql],
])(
  '%s: two clients × 4 callers keep a non-atomic counter exact',
  async (_id: string, contender: Contender) => {
    const clients = await Promise.all([contender.create(env), contender.create(env)]);
    const name = `${prefix}:${contender.id}`;
    let counter = 0;
    try {
      await Promise.all(
        clients.flatMap((client) =>
          Array.from({ length: 4 }, async () => {
            for (let i = 0; i < 10; i++) {
              await client.withLock(name, async () => {
                const v = counter;
                await new Promise((r) => setTimeout(r, 1));
                counter = v + 1;
              });
            }
          }),
        ),
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    expect(counter).toBe(80);
  },
  60_000,
);
