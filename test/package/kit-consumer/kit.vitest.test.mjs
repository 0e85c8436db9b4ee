// A store checked by the conformance kit under Vitest, as a store author's test file would.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it, beforeAll, afterAll } from 'vitest';
import { InMemoryLockProvider } from 'nest-lock';
import { describeLockProviderConformance } from 'nest-lock/testing';

const script = fileURLToPath(new URL('./paused-holder.mjs', import.meta.url));
const pausedHolder = {
  spawn: (argument) => spawn(process.execPath, [script, argument], { stdio: ['pipe', 'pipe', 'inherit'] }),
  sharesStore: false,
};
describeLockProviderConformance(
  'InMemoryLockProvider',
  () => ({ provider: new InMemoryLockProvider() }),
  { describe, it, beforeAll, afterAll },
  { pausedHolder },
);
