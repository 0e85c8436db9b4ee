import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProviderConformance } from './lock-provider.conformance.js';

describeLockProviderConformance('InMemoryLockProvider', async () => ({ provider: new InMemoryLockProvider(), child: { kind: 'memory' } }));
