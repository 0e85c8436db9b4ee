/** The paused-holder capability of the conformance kit for this repository's stores: a compiled fixture opens the same store. */
import { spawn } from 'node:child_process';
import type { PausedHolderProcess } from 'nest-lock/testing';
import { compiledScript } from '../support/paths.js';
import type { ChildStore } from './fixtures/child-store.js';

/** Starts test/contract/fixtures/paused-holder.ts (compiled) on `store`; its stderr goes to the test's. */
export function pausedHolderOn(store: ChildStore): PausedHolderProcess {
  const script = compiledScript(new URL('./fixtures/paused-holder.js', import.meta.url));
  return {
    spawn: (argument) =>
      spawn(process.execPath, [script, argument, JSON.stringify(store)], { stdio: ['pipe', 'pipe', 'inherit'] }),
    sharesStore: store.kind !== 'memory',
  };
}
