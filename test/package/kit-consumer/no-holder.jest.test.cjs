// A store that does not offer holder(), checked under Jest with { holder: false } and no paused-holder script: the
// cases it turns off are listed as skipped, by name, with the reason.
const { describe, it, beforeAll, afterAll } = require('@jest/globals');
const { InMemoryLockProvider } = require('nest-lock');
const { describeLockProviderConformance } = require('nest-lock/testing');

describeLockProviderConformance(
  'StoreWithoutHolder',
  () => ({ provider: Object.assign(new InMemoryLockProvider(), { holder: undefined }) }),
  { describe, it, beforeAll, afterAll },
  { holder: false },
);
