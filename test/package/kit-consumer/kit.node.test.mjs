// A store checked by the conformance kit under node:test, as a store author's test file would.
import { describe, it, before, after } from 'node:test';
import { InMemoryLockProvider } from 'nest-lock';
import { describeLockProviderConformance } from 'nest-lock/testing';

describeLockProviderConformance('InMemoryLockProvider', () => ({ provider: new InMemoryLockProvider() }), { describe, it, before, after });
