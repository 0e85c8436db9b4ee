export { RedisLockProvider } from './redis-lock.provider.js';
export type { RedisLockProviderOptions, RedisConnection } from './redis-lock-provider.interface.js';
