/** Compiled test fixtures run as child processes, and the lines they print. */
import { spawn, type ChildProcess } from 'node:child_process';
import { compiledScript } from './paths.js';

/**
 * Spawns the compiled form of a fixture, given its source URL
 * (`new URL('./fixtures/<name>.js', import.meta.url)`), with `args` as JSON
 * in its first argument; its stderr goes to the test's.
 */
export function spawnFixture(source: URL, args: unknown): ChildProcess {
  return spawn(process.execPath, [compiledScript(source), JSON.stringify(args)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

/** The stdout lines of a child, read once, awaited by prefix (the conformance kit's own reader). */
export { ChildLines } from '../../lib/testing/child-lines.js';
