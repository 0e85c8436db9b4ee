import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { describeLockProviderConformance } from './lock-provider.conformance.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describeLockProviderConformance('RedisLockProvider', async () => ({
  provider: new RedisLockProvider({ redis: url }),
  peer: new RedisLockProvider({ redis: url }),
  child: { kind: 'redis', url },
}));
