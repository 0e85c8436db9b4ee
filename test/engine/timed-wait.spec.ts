import { spawnSync } from 'node:child_process';
import { compiledScript } from '../support/paths.js';
import { POSTGRES_URL, dropLockTables, uniqueTable } from '../support/pg-test-env.js';

/** Runs the fixture with plain `node` (no test runner holding the event loop open). */
function run(args: Record<string, unknown>) {
  const script = compiledScript(new URL('./fixtures/timed-wait.js', import.meta.url));
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawnSync(process.execPath, [script, JSON.stringify(args)], { env, encoding: 'utf8', timeout: 20_000 });
}

describe('a wait with a deadline keeps a plain Node process alive until it ends', () => {
  const table = uniqueTable('timedwait');
  afterAll(() => dropLockTables(table));

  test.each([
    ['in-memory', { store: 'memory' }],
    ['Redis', { store: 'redis', url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }],
    ['PostgreSQL', { store: 'postgres', url: POSTGRES_URL, tableName: table }],
  ])('%s: the wait ends with LockAcquireError after its timeout, and the script goes on to exit 0', (_label, args) => {
    const child = run(args);
    expect(child.error).toBeUndefined();
    expect(child.stderr).toBe('');
    // Exit code 13 (unsettled top-level await) means the process ran out of work in mid-wait.
    expect(child.status).toBe(0);
    const match = /^waited (\S+) (\d+)$/m.exec(child.stdout);
    expect(match?.[1]).toBe('LockAcquireError');
    expect(Number(match![2])).toBeGreaterThanOrEqual(450);
  });

  test.each([
    ['in-memory', { store: 'memory' }],
    ['Redis', { store: 'redis', url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }],
    ['PostgreSQL', { store: 'postgres', url: POSTGRES_URL, tableName: table }],
  ])('%s: a wait without deadline behind a lease that runs out is granted, and the script exits 0', (_label, args) => {
    const child = run({ ...args, expiry: true });
    expect(child.error).toBeUndefined();
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(child.stdout).toMatch(/^waited granted \d+$/m);
  });
});
