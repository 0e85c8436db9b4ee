import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { modelTest } from './lock-model.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Three instances: each provider has connections of its own.
const providers = [0, 1, 2].map(() => new RedisLockProvider({ redis: url }));
afterAll(() => Promise.all(providers.map((p) => p.close())));

modelTest({
  label: 'RedisLockProvider, three instances',
  providers,
  timing: { shortLease: 600, fresh: 150, waitTimeout: 100 },
  runs: 20,
});
