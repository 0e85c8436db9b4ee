export { RedisLockProvider } from './redis-lock.provider.js';
export type {
  RedisLockProviderOptions,
  RedisConnection,
  RedisClient,
  NodeRedisClient,
  NodeRedisCluster,
  NodeRedisSentinel,
  IovalkeyClient,
} from './redis-lock-provider.interface.js';
