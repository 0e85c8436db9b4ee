/**
 * The Cluster slot the Redis store groups a batch of renewals by (one script
 * per slot) is the slot ioredis and Redis compute: CRC16 of the key, or of its
 * hash tag.
 */
import { createRequire } from 'node:module';
import { clusterSlot } from '../../../lib/stores/redis/redis-renewal.js';

// ioredis's own slot function (its dependency `cluster-key-slot`).
const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

test('clusterSlot agrees with ioredis on lock keys, hash tags and non-ASCII keys, and with Redis on an empty tag', () => {
  const keys = ['', 'a', 'foo', '{lock:orders}', '{lock:{x}}', 'a{}b', 'a{b}c{d}', '{lock:zählung:✓}', 'x'.repeat(300)];
  for (let i = 0; i < 500; i++) keys.push(`{lock:job:${i}}`);
  for (const key of keys) expect([key, clusterSlot(key)]).toEqual([key, calculateSlot(key)]);
  // Known values (CLUSTER KEYSLOT): "foo" is 12182, "{lock:orders}" hashes "lock:orders".
  expect(clusterSlot('foo')).toBe(12182);
  expect(clusterSlot('{lock:orders}')).toBe(clusterSlot('lock:orders'));
  // An empty tag first: Redis hashes the whole key (keyHashSlot in cluster.c), where cluster-key-slot 1.1 reads the next tag.
  expect(clusterSlot('{}{b}')).toBe(8193);
});
