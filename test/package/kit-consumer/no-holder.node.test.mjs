// A store that does not offer holder(), checked under node:test with { holder: false } and no paused-holder script:
// the cases it turns off are listed as skipped, by name, with the reason.
import { describe, it, before, after } from 'node:test';
import { InMemoryLockProvider } from 'nest-lock';
import { describeLockProviderConformance } from 'nest-lock/testing';

describeLockProviderConformance(
  'StoreWithoutHolder',
  () => ({ provider: Object.assign(new InMemoryLockProvider(), { holder: undefined }) }),
  { describe, it, before, after },
  { holder: false },
);
