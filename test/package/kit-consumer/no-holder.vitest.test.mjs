// A store that does not offer holder(), checked under Vitest with { holder: false } and no paused-holder script: the
// cases it turns off are listed as skipped, by name, with the reason.
import { describe, it, beforeAll, afterAll } from 'vitest';
import { InMemoryLockProvider } from 'nest-lock';
import { describeLockProviderConformance } from 'nest-lock/testing';

describeLockProviderConformance(
  'StoreWithoutHolder',
  () => ({ provider: Object.assign(new InMemoryLockProvider(), { holder: undefined }) }),
  { describe, it, beforeAll, afterAll },
  { holder: false },
);
