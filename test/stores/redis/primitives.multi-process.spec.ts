/**
 * Semaphores, read/write locks and several names at once across processes
 * on Redis: 3 children, each a LockManager on its own connection, with the
 * checks of test/support/primitives-check.ts.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { primitivesAcrossProcesses } from '../../support/primitives-check.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const namespace = `mpp:${randomBytes(6).toString('hex')}`;
let redis: Redis;

beforeAll(() => {
  redis = new Redis(url);
});
afterAll(async () => {
  const keys = await redis.keys(`${namespace}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('Redis: semaphores, read/write locks and several names across processes', () => {
  primitivesAcrossProcesses({
    fixture: new URL('./fixtures/primitives-worker.js', import.meta.url),
    args: { url },
    namespace: `${namespace}:`,
    counter: async (key) => Number((await redis.get(`${namespace}:ledger:${key}`)) ?? 0),
  });
});
