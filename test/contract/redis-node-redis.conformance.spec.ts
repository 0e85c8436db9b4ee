/**
 * The conformance suite on node-redis clients (`redis` v5, RESP3: replies as
 * node-redis gives them for the newer protocol) and on an iovalkey client:
 * the store behind its client port must behave the same whatever client the
 * app passes. The paused holder is an ioredis process: clients mix on one Redis.
 */
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { Redis } from 'ioredis';
import { Redis as ValkeyRedis } from 'iovalkey';
import { createClient } from 'redis';
import { describeLockProviderConformance } from 'nest-lock/testing';
import type { RedisClient } from '../../lib/stores/redis/index.js';
import { redisClientsTarget } from '../support/redis-conformance-target.js';
import { pausedHolderOn } from './paused-holder-process.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The suite on two providers, each on a client `open()` makes (closed by `close()`), inspected by ioredis. */
function conformanceOn(name: string, open: () => RedisClient, close: (client: RedisClient) => Promise<unknown>): void {
  describeLockProviderConformance(
    name,
    () => redisClientsTarget(open, close, new Redis(url)),
    { describe, it, beforeAll, afterAll },
    { pausedHolder: pausedHolderOn({ kind: 'redis', url }) },
  );
}

conformanceOn(
  'RedisLockProvider on node-redis clients (RESP3)',
  () => createClient({ url, RESP: 3 }).on('error', () => {}),
  (client) => (client as ReturnType<typeof createClient>).close(),
);

conformanceOn(
  'RedisLockProvider on iovalkey clients',
  () => new ValkeyRedis(url),
  (client) => (client as ValkeyRedis).quit(),
);
