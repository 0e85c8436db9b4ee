import { InMemoryLockProvider } from '../../lib/index.js';
import { modelTest } from './lock-model.js';

// One store in this process, three managers on it.
const memory = new InMemoryLockProvider();
afterAll(() => memory.close());

modelTest({
  label: 'InMemoryLockProvider',
  providers: [memory, memory, memory],
  timing: { shortLease: 200, fresh: 80, waitTimeout: 50 },
  runs: 40,
});
