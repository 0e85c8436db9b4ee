import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { InMemoryLockProvider } from '../../lib/index.js';
import { IDLE_SWEEP_MS } from '../../lib/stores/memory/idle-sweep.js';
import { memoryLeftovers } from '../support/memory-leftovers.js';
import { pausedHolderOn } from './paused-holder-process.js';

describeLockProviderConformance(
  'InMemoryLockProvider',
  () => {
    const provider = new InMemoryLockProvider();
    return { provider, releaseWindowMs: IDLE_SWEEP_MS, leftovers: async (key) => memoryLeftovers(provider, key) };
  },
  { describe, it, beforeAll, afterAll },
  { pausedHolder: pausedHolderOn({ kind: 'memory' }) },
);
