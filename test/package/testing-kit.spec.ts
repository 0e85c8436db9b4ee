/**
 * `nest-lock/testing` from the packed tarball, as a store author uses it:
 * the three files of test/package/kit-consumer (a store checked in a few
 * lines, one file per runner, with the paused-holder script an author
 * writes) run under Jest, Vitest and node:test against the in-memory store,
 * each passing every case, none left out. Jest is this checkout's (on Node
 * 24: it require()s Nest 12's ES modules only from 24.9 on); Vitest is the
 * cached install of test/apps/nest12-esm-vitest (packed-apps.ts).
 */
import { spawn } from 'node:child_process';
import { cpSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { childEnv, installedModules, nodeBinary } from './packed-apps.js';
import { installUnpacked, packLibrary, repoRoot, type PackedLibrary } from './packed-library.js';

let packed: PackedLibrary;
let consumer: string;

beforeAll(() => {
  packed = packLibrary();
  consumer = installUnpacked(packed.tarball, ['@nestjs', 'rxjs', 'reflect-metadata', 'jest', '@jest']);
  symlinkSync(join(installedModules('nest12-esm-vitest'), 'vitest'), join(consumer, 'node_modules/vitest'), 'dir');
  for (const file of readdirSync(join(repoRoot, 'test/package/kit-consumer')))
    cpSync(join(repoRoot, 'test/package/kit-consumer', file), join(consumer, file));
}, 600_000);
afterAll(() => {
  rmSync(dirname(packed.tarball), { recursive: true, force: true });
  rmSync(consumer, { recursive: true, force: true });
});

/** Runs `args` with Node in the consumer folder: exit code and output. */
function run(node: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, {
      cwd: consumer,
      env: { ...childEnv(node), CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('exit', (code) => (clearTimeout(timer), resolve({ code, output })));
  });
}

const RUNNERS: Array<[runner: string, args: () => string[], node: () => string]> = [
  // Nest 12 is ES modules only, and Jest require()s an ES module only from Node 24.9 on, with VM modules (as test/apps/nest12-cjs-jest runs).
  [
    'Jest',
    () => [
      '--experimental-vm-modules',
      join(consumer, 'node_modules/jest/bin/jest.js'),
      '--config',
      '{"transform":{}}',
      '--verbose',
      'kit.jest.test.cjs',
    ],
    () => nodeBinary('24'),
  ],
  [
    'Vitest',
    () => [join(consumer, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=verbose', 'kit.vitest.test.mjs'],
    () => process.execPath,
  ],
  ['node:test', () => ['--test', '--test-reporter=spec', 'kit.node.test.mjs'], () => process.execPath],
];

test('the kit from the tarball passes the in-memory store under Jest, Vitest and node:test, the paused-holder cases included', async () => {
  // The three at once: each run is mostly waiting (leases, timeouts).
  const runs = await Promise.all(RUNNERS.map(([, args, node]) => run(node(), args())));
  for (const [i, [runner]] of RUNNERS.entries()) {
    const { code, output } = runs[i];
    const seen = { runner, code, passed: output.includes('release frees the key for its owner only') };
    expect({ ...seen, output: code === 0 ? '' : output }).toEqual({ runner, code: 0, passed: true, output: '' });
    // The author gave the paused-holder script (kit-consumer/paused-holder.mjs): those cases ran, and none was left out.
    expect({
      runner,
      pausedCases: output.match(/SIGSTOP past its lease \(renew: (false|true)\)/g)?.length,
      leftOut: /\[not run:/.test(output),
    }).toEqual({
      runner,
      pausedCases: 2,
      leftOut: false,
    });
  }
}, 400_000);
