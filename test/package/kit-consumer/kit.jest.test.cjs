// A store checked by the conformance kit under Jest (CommonJS), as a store author's test file would.
const { describe, it, beforeAll, afterAll } = require('@jest/globals');
const { InMemoryLockProvider } = require('nest-lock');
const { describeLockProviderConformance } = require('nest-lock/testing');

describeLockProviderConformance('InMemoryLockProvider', () => ({ provider: new InMemoryLockProvider() }), { describe, it, beforeAll, afterAll });
