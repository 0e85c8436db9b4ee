/**
 * scripts/test-setup.mjs, npm test's pretest: on this machine (services
 * running, Chromium installed) it checks and changes nothing; where a piece is
 * missing it fails naming it and the command that installs it. (Starting a
 * service that is down is not run here: the services are shared.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/free-port.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function setup(env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  const childEnv = { ...process.env, ...env };
  delete childEnv.NODE_OPTIONS;
  return spawnSync(process.execPath, [join(root, 'scripts/test-setup.mjs')], {
    cwd: root,
    env: childEnv,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('the test set-up (npm test runs it first)', () => {
  test('with everything there, it exits 0 and starts or installs nothing', () => {
    const run = setup({});
    expect(run).toMatchObject({ status: 0, stdout: '', stderr: '' });
  });

  test('a missing binary fails the run, naming it and the command that installs it', () => {
    // An empty PATH: no redis-server, redis-cli, runuser, apt-get (the script runs on this process's node).
    const empty = mkdtempSync(join(tmpdir(), 'nest-lock-empty-path-'));
    const run = setup({ PATH: empty });
    rmSync(empty, { recursive: true, force: true });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^npm test cannot run on this machine yet:/);
    expect(run.stderr).toMatch(
      /- redis-server and redis-cli are not on PATH .*: (sudo )?apt-get install -y redis-server/,
    );
    if (process.getuid?.() === 0)
      expect(run.stderr).toMatch(/- runuser is not on PATH .*: apt-get install -y util-linux/);
    // What is there is not reported: PostgreSQL's server binaries are found in /usr/lib/postgresql/*/bin too.
    expect(run.stderr).not.toMatch(/initdb|Chromium|MariaDB/);
  });

  test('a Redis given by REDIS_URL that does not answer is named, not started (only the default 127.0.0.1:6379 is started)', async () => {
    const port = await freePort();
    const run = setup({ REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`- Redis does not answer at 127.0.0.1:${port} (REDIS_URL): start it there`);
  });

  test('a PostgreSQL database that cannot be reached is named with the cause', () => {
    const run = setup({ TEST_POSTGRES_URL: 'postgres://no_such_role@127.0.0.1:5432/test' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /- PostgreSQL at 127\.0\.0\.1:5432\/test \(TEST_POSTGRES_URL\) does not answer: .*no_such_role/,
    );
  });
});
