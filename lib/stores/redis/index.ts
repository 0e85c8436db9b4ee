export { RedisLockProvider, type RedisLockProviderOptions, type RedisConnection } from './redis-lock.provider.js';
