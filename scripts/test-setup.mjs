/**
 * What `npm test` needs on the machine, checked before the suite runs (npm's
 * `pretest`): a service that is installed but not running is started, Chromium
 * is installed with apt-get where the script may, and anything else missing
 * fails the run with one line per missing piece and the command that installs
 * it. When everything is there it only checks, in well under a second.
 *
 *   node scripts/test-setup.mjs      (npm test runs it first; .ci/run runs npm test)
 *
 * The suite needs:
 * - Redis on 127.0.0.1:6379 (or REDIS_URL), and redis-server / redis-cli on
 *   PATH (tests start servers and clusters of their own);
 * - PostgreSQL on 127.0.0.1:5432 with trust auth and a database `test` (or
 *   TEST_POSTGRES_URL), and initdb / pg_ctl / postgres (on PATH or in
 *   /usr/lib/postgresql/<version>/bin: a test restarts a server of its own),
 *   which, as root, run as the OS user `postgres` through runuser;
 * - MariaDB on 127.0.0.1:3306 (started when it is not running), root without a password, and
 *   the database `test` (or TEST_MYSQL_URL; created when missing);
 * - Chromium at /usr/bin/chromium (Debian's `chromium`: the lock page's
 *   browser test).
 * The commands named are Debian's (apt-get), as on the CI machine.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';

const CHROMIUM = '/usr/bin/chromium';
const isRoot = process.getuid?.() === 0;
const problems = [];

/** A Debian install command, with sudo when not root. */
const install = (pkg) => `${isRoot ? '' : 'sudo '}apt-get install -y ${pkg}`;

function onPath(binary, extraDirs = []) {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...extraDirs]) {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return join(dir, binary);
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** Debian keeps the PostgreSQL server binaries in /usr/lib/postgresql/<version>/bin, newest first. */
function postgresBinDirs() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(base, version, 'bin'));
}

/** Sends `send` to host:port and resolves with the first bytes the server answers (or an error). */
function ask(host, port, send, ms = 1_000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(ms, () => done(new Error('no answer')));
    socket.once('error', (err) => done(err));
    socket.once('connect', () => {
      if (send) socket.write(send);
    });
    socket.once('data', (data) => done(data.toString('latin1')));
  });
}

async function waitFor(check, ms) {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function run(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000 });
  return result.status === 0 ? '' : `${result.error?.message ?? ''}${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
}

// --- Redis ---------------------------------------------------------------------------------
const redisUrl = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const redisHost = redisUrl.hostname || '127.0.0.1';
const redisPort = Number(redisUrl.port || 6379);
const redisUp = async () => /^\+PONG|^-NOAUTH/.test(String(await ask(redisHost, redisPort, 'PING\r\n')));
const redisServer = onPath('redis-server');
if (!redisServer || !onPath('redis-cli')) {
  problems.push(
    `redis-server and redis-cli are not on PATH (the Redis tests start servers and clusters of their own): ${install('redis-server')}`,
  );
}
if (!(await redisUp())) {
  if (redisServer && ['127.0.0.1', 'localhost'].includes(redisHost) && redisPort === 6379) {
    console.log('test set-up: starting Redis on 127.0.0.1:6379');
    const failed = run(redisServer, [
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '--port',
      '6379',
      '--save',
      '',
      '--appendonly',
      'no',
    ]);
    if (failed || !(await waitFor(redisUp, 10_000)))
      problems.push(`Redis did not start on 127.0.0.1:6379${failed ? `: ${failed}` : ''}`);
  } else if (redisServer) {
    problems.push(`Redis does not answer at ${redisHost}:${redisPort} (REDIS_URL): start it there`);
  }
}

// --- PostgreSQL ----------------------------------------------------------------------------
const postgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgBinDirs = postgresBinDirs();
const missingPg = ['initdb', 'pg_ctl', 'postgres'].filter((b) => !onPath(b, pgBinDirs));
if (missingPg.length > 0) {
  problems.push(
    `${missingPg.join(', ')} not found on PATH nor in /usr/lib/postgresql/*/bin (a test restarts a server of its own): ${install('postgresql')}`,
  );
}
if (isRoot) {
  if (!onPath('runuser'))
    problems.push(
      `runuser is not on PATH (as root, the PostgreSQL restart test runs its server as 'postgres'): ${install('util-linux')}`,
    );
  if (!/^postgres:/m.test(readFileSync('/etc/passwd', 'utf8'))) {
    problems.push(
      `there is no OS user 'postgres' (PostgreSQL refuses to run as root; the restart test runs its server as that user): ${install('postgresql')}`,
    );
  }
}
let pg;
try {
  pg = (await import('pg')).default;
} catch {
  problems.push('the dev dependencies are not installed (the set-up checks PostgreSQL with pg): npm install');
}
/** '' when `select 1` runs on the URL's database; else the error's message. */
async function postgresAnswer(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return '';
  } catch (err) {
    return `${err.code ? `${err.code}: ` : ''}${err.message}`;
  } finally {
    await client.end().catch(() => {});
  }
}
if (pg) {
  const target = new URL(postgresUrl);
  let answer = await postgresAnswer(postgresUrl);
  if (
    /ECONNREFUSED/.test(answer) &&
    ['127.0.0.1', 'localhost'].includes(target.hostname) &&
    existsSync('/etc/postgresql') &&
    onPath('pg_ctlcluster')
  ) {
    const version = readdirSync('/etc/postgresql').sort((a, b) => Number(b) - Number(a))[0];
    console.log(`test set-up: starting PostgreSQL ${version} (cluster main)`);
    const failed = run('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start']);
    await waitFor(async () => !/ECONNREFUSED|starting up/.test((answer = await postgresAnswer(postgresUrl))), 20_000);
    if (failed && answer) answer = `${answer} (pg_ctlcluster: ${failed})`;
  }
  if (answer.startsWith('3D000')) {
    // The server runs, the database does not exist: create it.
    const database = target.pathname.slice(1);
    const admin = new URL(postgresUrl);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      console.log(`test set-up: creating the PostgreSQL database ${database}`);
      await client.query(`create database "${database.replaceAll('"', '""')}"`);
      answer = await postgresAnswer(postgresUrl);
    } catch (err) {
      answer = `${answer}; creating it failed: ${err.message}`;
    } finally {
      await client.end().catch(() => {});
    }
  }
  if (answer) {
    const how = /ECONNREFUSED/.test(answer)
      ? missingPg.length > 0
        ? install('postgresql')
        : 'start PostgreSQL there'
      : 'the tests connect as user postgres with trust auth';
    problems.push(
      `PostgreSQL at ${target.host}${target.pathname} (TEST_POSTGRES_URL) does not answer: ${answer}: ${how}`,
    );
  }
}

// --- MariaDB -------------------------------------------------------------------------------
// A MariaDB / MySQL server speaks first: a handshake packet whose 5th byte is the protocol version 10.
const mariadbUp = async () => {
  const greeting = await ask('127.0.0.1', 3306, undefined);
  return typeof greeting === 'string' && greeting.charCodeAt(4) === 10;
};
if (!(await mariadbUp())) {
  const mariadbd = onPath('mariadbd', ['/usr/sbin']);
  if (!mariadbd) {
    problems.push(
      `MariaDB does not answer on 127.0.0.1:3306 and mariadbd is not installed: ${install('mariadb-server')}`,
    );
  } else if (!onPath('start-stop-daemon', ['/usr/sbin', '/sbin'])) {
    problems.push(
      'MariaDB does not answer on 127.0.0.1:3306: start it (mariadbd), with root and no password, and a database test',
    );
  } else {
    console.log('test set-up: starting MariaDB on 127.0.0.1:3306');
    const failed = run(onPath('start-stop-daemon', ['/usr/sbin', '/sbin']), [
      '--start',
      '--oknodo',
      '--background',
      '--exec',
      mariadbd,
    ]);
    if (failed || !(await waitFor(mariadbUp, 20_000)))
      problems.push(`MariaDB did not start on 127.0.0.1:3306${failed ? `: ${failed}` : ''}`);
  }
}

// The MySQL store's tests log in as root without a password (or TEST_MYSQL_URL) to the database test, created here if missing.
const mysqlUrl = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
let mysql2;
try {
  mysql2 = (await import('mysql2/promise')).default;
} catch {
  problems.push('the dev dependencies are not installed (the set-up checks MariaDB with mysql2): npm install');
}
/** '' when `select 1` runs on `url`; else the error's code and message. */
async function mysqlAnswer(url) {
  let conn;
  try {
    conn = await mysql2.createConnection({ uri: url, connectTimeout: 2_000 });
    await conn.query('select 1');
    return '';
  } catch (err) {
    return `${err.code ? `${err.code}: ` : ''}${err.message}`;
  } finally {
    await conn?.end().catch(() => {});
  }
}
if (mysql2 && (await mariadbUp())) {
  const target = new URL(mysqlUrl);
  let answer = await mysqlAnswer(mysqlUrl);
  if (answer.startsWith('ER_BAD_DB_ERROR')) {
    const database = decodeURIComponent(target.pathname.slice(1));
    const admin = new URL(mysqlUrl);
    admin.pathname = '/';
    let conn;
    try {
      conn = await mysql2.createConnection({ uri: admin.href, connectTimeout: 2_000 });
      console.log(`test set-up: creating the MariaDB database ${database}`);
      await conn.query(`create database \`${database.replaceAll('`', '``')}\``);
      answer = await mysqlAnswer(mysqlUrl);
    } catch (err) {
      answer = `${answer}; creating it failed: ${err.message}`;
    } finally {
      await conn?.end().catch(() => {});
    }
  }
  if (answer)
    problems.push(
      `MariaDB at ${target.host}${target.pathname} (TEST_MYSQL_URL) does not answer: ${answer}: the tests connect as root without a password`,
    );
}

// --- Chromium ------------------------------------------------------------------------------
if (!existsSync(CHROMIUM)) {
  if (isRoot && onPath('apt-get')) {
    console.log("test set-up: installing Chromium (Debian package 'chromium') for the lock page's browser test");
    const failed =
      run('apt-get', ['update', '-qq']) ||
      spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
        encoding: 'utf8',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      }).stderr;
    if (!existsSync(CHROMIUM))
      problems.push(
        `apt-get could not install Chromium (${CHROMIUM}, the lock page's browser test): ${String(failed).trim().split('\n').slice(-5).join(' ')}`,
      );
  } else {
    problems.push(`Chromium is not at ${CHROMIUM} (the lock page's browser test): ${install('chromium')}`);
  }
}

if (problems.length > 0) {
  console.error(`npm test cannot run on this machine yet:\n${problems.map((p) => `- ${p}`).join('\n')}`);
  process.exit(1);
}
