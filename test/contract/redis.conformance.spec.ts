import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { describeLockProviderConformance } from './lock-provider.conformance.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeLockProviderConformance(
  'RedisLockProvider',
  async () => ({
    provider: new RedisLockProvider({ redis: url }),
    peer: new RedisLockProvider({ redis: url }),
  }),
  // Until RedisLockProvider keeps semaphores and read/write locks (supports: { limit, shared }): remove this option then, as every built-in store must.
  { limitAndShared: false },
);
