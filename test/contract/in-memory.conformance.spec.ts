import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { InMemoryLockProvider } from '../../lib/index.js';
import { pausedHolderOn } from './paused-holder-process.js';

describeLockProviderConformance(
  'InMemoryLockProvider',
  () => ({ provider: new InMemoryLockProvider() }),
  { describe, it, beforeAll, afterAll },
  { pausedHolder: pausedHolderOn({ kind: 'memory' }) },
);
