// A store checked by the conformance kit under Vitest, as a store author's test file would.
import { describe, it, beforeAll, afterAll } from 'vitest';
import { InMemoryLockProvider } from 'nest-lock';
import { describeLockProviderConformance } from 'nest-lock/testing';

describeLockProviderConformance('InMemoryLockProvider', () => ({ provider: new InMemoryLockProvider() }), { describe, it, beforeAll, afterAll });
