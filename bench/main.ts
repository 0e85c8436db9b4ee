/**
 * `npm run bench`: every scenario against the bench's own redis-server (and
 * the local PostgreSQL), one table on stdout, and bench/results/latest.json
 * + latest.svg (`--quick`: a short smoke run, written to quick.*; a run with
 * --only or --contenders writes partial.*).
 *
 * Flags: --quick, --only=1,3,5 (scenario numbers), --repeats=N,
 * --sizes=10,100,1000,10000 (scenarios 7 and 8: how the cost grows; --quick: 10,100),
 * --held-window=ms (scenario 7's measurement window, default 10 000; --quick 3 500),
 * --max-waiters=N (scenario 8's cap, default 10 000),
 * --contenders=ours-redis,raw-redis (contender ids; for quick comparisons while
 * working on one path: ratios need the raw and peer rows of their scenario).
 * Scenarios 7 to 11 print tables of their own (9: semaphore, 10: read/write, 11: keys left by released names; --only=9,10,11).
 * Env: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_MYSQL_URL (default mysql://root@127.0.0.1:3306/test).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { DEFAULT_BENCH_TTL, type BenchEnv } from './contenders/contender.js';
import { growthChart } from './support/growth-chart.js';
import {
  MEMORY,
  POSTGRES,
  POSTGRES_CONTENDED,
  REDIS_CONTENDED,
  REDIS_UNCONTENDED,
  contenderById,
  type Contender,
} from './contenders/index.js';
import { uncontended } from './scenarios/s1-uncontended.scenario.js';
import { parallel } from './scenarios/s2-parallel.scenario.js';
import { contended } from './scenarios/s3-contended.scenario.js';
import { inMemory } from './scenarios/s4-in-memory.scenario.js';
import { http } from './scenarios/s5-http.scenario.js';
import { heldLocks } from './scenarios/s7-held-locks.scenario.js';
import { manyWaiters } from './scenarios/s8-many-waiters.scenario.js';
import { semaphore } from './scenarios/s9-semaphore.scenario.js';
import { readWrite } from './scenarios/s10-read-write.scenario.js';
import { leftoverKeys } from './scenarios/s11-leftover-keys.scenario.js';
import { READ_WRITE, SEMAPHORE } from './contenders/permits.contenders.js';
import { MYSQL, MYSQL_CONTENDED, mysqlServerVersion } from './contenders/mysql.contenders.js';
import { growthTable, sizesFlag, type GrowthTable } from './support/growth.js';
import { BenchRedis } from './support/redis-server.js';
import { legend, table, targetLines, targets } from './support/report.js';
import type { Row } from './support/results.js';
import type { BenchContext, BenchOptions } from './support/runner.js';
import { chart } from './support/svg.js';

function parseArgs(argv: string[]): {
  options: BenchOptions;
  only: Set<number> | undefined;
  pick: <C extends Contender>(list: readonly C[]) => C[];
  partial: boolean;
} {
  const quick = argv.includes('--quick');
  const only = argv.find((a) => a.startsWith('--only='))?.slice(7);
  const repeats = Number(argv.find((a) => a.startsWith('--repeats='))?.slice(10) ?? NaN);
  const options: BenchOptions = quick
    ? { quick, repeats: 2, longRepeats: 2, runMs: 400, longRunMs: 1_000 }
    : { quick, repeats: 7, longRepeats: 5, runMs: 1_000, longRunMs: 3_000 };
  const withRepeats =
    Number.isInteger(repeats) && repeats > 0 ? { ...options, repeats, longRepeats: repeats } : options;
  const ids = argv
    .find((a) => a.startsWith('--contenders='))
    ?.slice(13)
    .split(',');
  for (const id of ids ?? []) contenderById(id); // an unknown id fails here, naming the known ones
  const pick = <C extends Contender>(list: readonly C[]): C[] => list.filter((c) => !ids || ids.includes(c.id));
  return {
    options: withRepeats,
    only: only ? new Set(only.split(',').map(Number)) : undefined,
    pick,
    partial: only !== undefined || ids !== undefined,
  };
}

async function postgresVersion(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    const r = await client.query<{ server_version: string }>('SHOW server_version');
    return r.rows[0]?.server_version;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

function machine(redisVersion: string, pgVersion: string | undefined): Record<string, string> {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  return {
    cpus: `${os.availableParallelism()} × ${os.cpus()[0]?.model ?? 'unknown'}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    redis: redisVersion,
    postgres: pgVersion ?? 'not reachable',
    commit: git('rev-parse', '--short', 'HEAD'),
  };
}

async function main(): Promise<void> {
  const { options, only, pick, partial } = parseArgs(process.argv.slice(2));
  const wants = (n: number): boolean => !only || only.has(n);
  const started = Date.now();
  const log = (line: string): void => {
    process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
  };
  const redis = await BenchRedis.start();
  const pgUrl = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pgVersion = await postgresVersion(pgUrl);
  const mysqlUrl = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
  const mysqlVersion = await mysqlServerVersion(mysqlUrl);
  const env: BenchEnv = { redisUrl: redis.url, pgUrl, mysqlUrl, ttl: DEFAULT_BENCH_TTL };
  const ctx: BenchContext = { env, options, log };
  log(
    `bench redis-server ${redis.version} on port ${redis.port}; postgres ${pgVersion ?? 'not reachable'}; ${options.quick ? 'quick' : 'full'} run`,
  );
  const rows: Row[] = [];
  const growth: GrowthTable[] = [];
  const argv = process.argv.slice(2);
  const sizes = sizesFlag(argv, options.quick ? [10, 100] : [10, 100, 1_000, 10_000]);
  const flag = (name: string, fallback: number): number =>
    Number(argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
  try {
    if (wants(1)) {
      log('scenario 1: uncontended');
      rows.push(...(await uncontended(ctx, 's1', pick(REDIS_UNCONTENDED), redis)));
    }
    if (wants(2)) {
      log('scenario 2: parallel');
      rows.push(...(await parallel(ctx, pick(REDIS_UNCONTENDED))));
    }
    if (wants(3)) {
      log('scenario 3: contended');
      rows.push(...(await contended(ctx, redis, 's3', pick(REDIS_CONTENDED))));
    }
    if (wants(4)) {
      log('scenario 4: in-memory');
      rows.push(...(await inMemory(ctx, pick(MEMORY))));
    }
    if (wants(5)) {
      log('scenario 5: HTTP');
      rows.push(...(await http(ctx)));
    }
    if (wants(6)) {
      if (pgVersion) {
        log('scenario 6: PostgreSQL');
        rows.push(...(await uncontended(ctx, 's6a', pick(POSTGRES))));
        rows.push(...(await contended(ctx, redis, 's6b', pick(POSTGRES_CONTENDED))));
      } else {
        log(`scenario 6 skipped: PostgreSQL not reachable at ${pgUrl}`);
      }
      if (mysqlVersion) {
        log(`scenario 6: MySQL (${mysqlVersion})`);
        rows.push(...(await uncontended(ctx, 's6a', pick(MYSQL))));
        rows.push(...(await contended(ctx, redis, 's6b', pick(MYSQL_CONTENDED))));
      } else {
        log(`scenario 6 (MySQL) skipped: not reachable at ${mysqlUrl}`);
      }
    }
    if (wants(7)) {
      log('scenario 7: many held locks');
      const stores = pgVersion ? (['memory', 'redis', 'postgres'] as const) : (['memory', 'redis'] as const);
      growth.push(
        await heldLocks(ctx, { sizes, stores, windowMs: flag('held-window', options.quick ? 3_500 : 10_000) }),
      );
    }
    if (wants(8)) {
      log('scenario 8: many waiters');
      growth.push(await manyWaiters(ctx, { sizes, maxWaiters: flag('max-waiters', 10_000) }));
    }
    if (wants(9)) {
      log('scenario 9: semaphore');
      growth.push(await semaphore(ctx, pick(SEMAPHORE)));
    }
    if (wants(10)) {
      log('scenario 10: read/write');
      growth.push(await readWrite(ctx, pick(READ_WRITE)));
    }
    if (wants(11)) {
      log('scenario 11: what released names leave in Redis');
      growth.push(await leftoverKeys(ctx, { names: options.quick ? 1_000 : 5_000, at: [1_000, 10_000] }));
    }
  } finally {
    await redis.stop();
  }

  const ts = targets(rows);
  const info = machine(redis.version, pgVersion);
  const settings = `${options.repeats} repeats × ${options.runMs} ms (scenarios 1, 2, 4, 6a); ${options.longRepeats} × ${options.longRunMs} ms (3, 5, 6b)`;
  // A run of scenarios 7 to 11 alone prints their own tables only.
  const main = rows.length ? [table(rows), '', 'Checks against this run:', targetLines(ts), ''] : [];
  const out = [
    '',
    ...main,
    ...growth.flatMap((g) => [growthTable(g), '']),
    ...(rows.length ? [legend(rows), ''] : []),
    `Machine: ${Object.entries(info)
      .map(([k, v]) => `${k} ${v}`)
      .join('; ')}`,
    `Run: ${settings}; total ${((Date.now() - started) / 1000).toFixed(0)} s`,
    '',
  ].join('\n');
  process.stdout.write(out);

  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  // Only a full run of every scenario and contender replaces latest.*, which the README shows.
  const base = options.quick ? 'quick' : partial ? 'partial' : 'latest';
  const json = { date: new Date().toISOString(), machine: info, options, targets: ts, rows, growth };
  writeFileSync(`${dir}${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(`${dir}${base}.svg`, chart(rows, `${info.cpus}, node ${info.node}, redis ${info.redis}`));
  writeFileSync(`${dir}${base}.md`, `${out.trim()}\n`);
  const curves = growthChart(growth, `${info.cpus}, node ${info.node}, redis ${info.redis}`);
  if (curves) writeFileSync(`${dir}${base}-growth.svg`, curves);
  log(`wrote bench/results/${base}.json, ${base}.svg${curves ? `, ${base}-growth.svg` : ''} and ${base}.md`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
