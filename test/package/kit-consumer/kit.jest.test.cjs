// A store checked by the conformance kit under Jest (CommonJS), as a store author's test file would.
const { spawn } = require('node:child_process');
const { describe, it, beforeAll, afterAll } = require('@jest/globals');
const { InMemoryLockProvider } = require('nest-lock');
const { describeLockProviderConformance } = require('nest-lock/testing');

const pausedHolder = {
  spawn: (argument) =>
    spawn(process.execPath, [`${__dirname}/paused-holder.mjs`, argument], { stdio: ['pipe', 'pipe', 'inherit'] }),
  sharesStore: false,
};
describeLockProviderConformance(
  'InMemoryLockProvider',
  () => ({ provider: new InMemoryLockProvider() }),
  { describe, it, beforeAll, afterAll },
  { pausedHolder },
);
