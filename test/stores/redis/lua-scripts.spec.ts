/**
 * The Redis store's Lua scripts, kept as `.lua` files: each states its Input
 * and Output in its header, the text the provider loads is the files' (with
 * includes expanded), the builds carry the same files, and Redis runs that
 * text under the SHA the provider sends with EVALSHA.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';
import { FENCE_GRACE_MS, SCRIPTS } from '../../../lib/stores/redis/redis-lock.scripts.js';
import { repoRoot as root } from '../../support/paths.js';
import { RedisServer } from '../../support/redis-server.js';
import { sleep } from '../../support/sleep.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const scriptsDir = 'stores/redis/scripts';
const luaFiles = (readdirSync(join(root, 'lib', scriptsDir), { recursive: true }) as string[])
  .filter((f) => f.endsWith('.lua'))
  .sort();
const read = (file: string): string => readFileSync(join(root, 'lib', scriptsDir, file), 'utf8');

/** The header's `Input:` and `Output:` sections, as lines (trimmed). */
function header(text: string): { input: string[]; output: string[] } | undefined {
  const m = /^--\[\[\n([\s\S]*?)\n\]\]\n/.exec(text);
  if (!m) return undefined;
  const lines = m[1].split('\n').map((l) => l.trim());
  const inputAt = lines.indexOf('Input:');
  const outputAt = lines.indexOf('Output:');
  if (inputAt < 0 || outputAt < inputAt) return undefined;
  return { input: lines.slice(inputAt + 1, outputAt), output: lines.slice(outputAt + 1).filter((l) => l !== '') };
}

test('the scripts and their includes are .lua files', () => {
  expect(luaFiles).toEqual(
    expect.arrayContaining([
      'acquire.lua',
      'try-acquire.lua',
      'release.lua',
      'release-free.lua',
      'leave.lua',
      'extend.lua',
      'holder.lua',
      join('includes', 'queue.lua'),
    ]),
  );
});

test('the fencing counter outlives what it is kept for by FENCE_GRACE_MS, the one grace every fragment that sets its end includes', () => {
  expect(read(join('includes', 'fence-grace.lua'))).toContain(`local fence_grace = ${FENCE_GRACE_MS}\n`);
  for (const fragment of ['draw-fences', 'keep-fence', 'free-fence'])
    expect(read(join('includes', `${fragment}.lua`))).toContain('--- @include "fence-grace"');
});

test('every draw of fencing tokens is draw-fences (acquire-many too, from the counter of each lock), and every path that frees or sets a plain lease sets the counter end', () => {
  const draws = luaFiles.filter((f) => read(f).includes('@include "draw-fences"')).sort();
  expect(draws).toEqual(['acquire-many.lua', 'acquire.lua', join('includes', 'fence.lua'), 'try-acquire.lua'].sort());
  expect(read('acquire-many.lua')).toContain(
    'local n, hold, fence_key = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 1]), KEYS[i + 1]',
  );
  for (const file of ['release.lua', 'release-free.lua', 'leave.lua'])
    expect(read(file)).toContain('--- @include "free-fence"');
  for (const file of ['extend.lua', 'extend-many.lua', 'acquire.lua'])
    expect(read(file)).toContain('--- @include "keep-fence"');
  expect(luaFiles.filter((f) => /'PX', 3600000|'PX', \d{5,}/.test(read(f)))).toEqual([]);
});

test.each(luaFiles)('%s opens with a header that states its Input (one KEYS/ARGV a line) and its Output', (file) => {
  const text = read(file);
  const found = header(text);
  expect(found).toBeDefined();
  const { input, output } = found!;
  expect(input.length).toBeGreaterThan(0);
  expect(output.length).toBeGreaterThan(0);
  // One name a line: KEYS[n] / ARGV[n] (ARGV[#ARGV] in an include), or a local an include expects.
  for (const line of input) expect(line).toMatch(/^(KEYS\[\d+\]|ARGV\[(\d+|#ARGV)\]|[a-z_]+) +\S/);
  if (!file.startsWith('includes')) {
    // Every key and argument the script (with its includes) reads by number is in its header, in order.
    const name = names.find((n) => `${fileOf(n)}.lua` === file);
    expect(name).toBeDefined();
    const body = SCRIPTS[name!].source.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
    const listed = input.map((l) => l.split(' ')[0]);
    for (const used of new Set(body.match(/(KEYS|ARGV)\[\d+\]/g))) expect(listed).toContain(used);
    const keys = listed.filter((l) => l.startsWith('KEYS'));
    expect(keys).toEqual(keys.map((_, i) => `KEYS[${i + 1}]`));
  }
});

const names = Object.keys(SCRIPTS) as Array<keyof typeof SCRIPTS>;

/** The file of a script of {@link SCRIPTS}. */
function fileOf(name: keyof typeof SCRIPTS): string {
  return {
    acquire: 'acquire',
    try: 'try-acquire',
    release: 'release',
    releaseFree: 'release-free',
    leave: 'leave',
    extend: 'extend',
    holder: 'holder',
    groupAcquire: 'group-acquire',
    groupTransfer: 'group-transfer',
    groupRelease: 'group-release',
    groupExtend: 'group-extend',
    extendMany: 'extend-many',
    acquireMany: 'acquire-many',
  }[name];
}

test('each loaded script is its file with the includes expanded, and its sha is the SHA1 of that text', () => {
  const expand = (text: string): string =>
    text.replace(/^--- @include "([\w-]+)"$/gm, (_line, include: string) =>
      expand(read(join('includes', `${include}.lua`))).replace(/\n$/, ''),
    );
  for (const name of names) {
    const script = SCRIPTS[name];
    expect(script.source).toBe(expand(read(`${fileOf(name)}.lua`)));
    expect(script.source).not.toContain('@include');
    expect(script.sha).toBe(createHash('sha1').update(script.source).digest('hex'));
  }
});

test('the builds (dist/lib, dist/cjs) carry the same .lua files as lib (npm run build:all copies them)', () => {
  for (const out of ['dist/lib', 'dist/cjs']) {
    expect(existsSync(join(root, out, scriptsDir))).toBe(true);
    for (const file of luaFiles) expect(readFileSync(join(root, out, scriptsDir, file), 'utf8')).toBe(read(file));
  }
});

/** Runs each of the scripts through the provider: try-acquire, extend, extend-many, holder, acquire, leave, release-free, release, the group scripts, acquire-many. */
async function runEveryScript(provider: RedisLockProvider, admin: Redis): Promise<void> {
  const key = `lua:${randomBytes(6).toString('hex')}`;
  expect(await provider.acquire({ key, owner: 'a', ttl: 10_000, wait: false })).not.toBeNull();
  expect(await provider.extend(key, 'a', 10_000)).toBe(true);
  expect(await provider.extendMany([{ key, owner: 'a', ttl: 10_000 }])).toEqual([true]);
  expect((await provider.holder(key))?.owner).toBe('a');
  // (a wait shorter than commandTimeout queues at once, then leaves when its time is up)
  expect(await provider.acquire({ key, owner: 'b', ttl: 10_000, wait: true, waitTimeout: 300 })).toBeNull();
  expect(await provider.release(key, 'a')).toBe(true);
  expect(await provider.acquire({ key, owner: 'c', ttl: 10_000, wait: false })).not.toBeNull();
  const d = provider.acquire({ key, owner: 'd', ttl: 10_000, wait: true });
  while ((await admin.llen(`{${key}}:q`)) === 0) await sleep(10);
  // (waiters queued: the release hands the key on)
  expect(await provider.release(key, 'c')).toBe(true);
  expect(await d).not.toBeNull();
  expect(await provider.release(key, 'd')).toBe(true);
  // (a semaphore: the group scripts)
  expect(await provider.acquire({ key, owner: 'e', ttl: 10_000, wait: false, limit: 2 })).not.toBeNull();
  expect(await provider.extend(key, 'e', 10_000)).toBe(true);
  // (the local hand-off of a permit)
  expect(await provider.transfer(key, 'e', 'f', 10_000)).not.toBeNull();
  expect(await provider.release(key, 'f')).toBe(true);
  // (several names at once: acquire-many)
  const other = `${key}:other`;
  expect(
    await provider.acquireMany([
      { key, owner: 'g', ttl: 10_000 },
      { key: other, owner: 'g', ttl: 10_000 },
    ]),
  ).toHaveLength(2);
  expect(await provider.release(key, 'g')).toBe(true);
  expect(await provider.release(other, 'g')).toBe(true);
  await admin.del(`{${key}}:fence`, `{${other}}:fence`);
}

const shas = Object.values(SCRIPTS).map((s) => s.sha);

test('on the Redis of 6379: the provider runs every script, Redis has each under its sha and computes that sha from its text', async () => {
  const admin = new Redis(url);
  const provider = new RedisLockProvider({ redis: url });
  try {
    await runEveryScript(provider, admin);
    expect(await admin.script('EXISTS', ...shas)).toEqual(shas.map(() => 1));
    for (const script of Object.values(SCRIPTS)) expect(await admin.script('LOAD', script.source)).toBe(script.sha);
  } finally {
    await provider.close();
    await admin.quit();
  }
});

test('on a fresh Redis (an empty script cache), the scripts Redis caches while the provider works are exactly the loaded texts', async () => {
  const server = await RedisServer.start();
  const admin = new Redis(server.url);
  const provider = new RedisLockProvider({ redis: server.url });
  try {
    expect(await admin.script('EXISTS', ...shas)).toEqual(shas.map(() => 0));
    await runEveryScript(provider, admin);
    // EVALSHA found nothing, so each script went by EVAL with its text, which Redis cached under the SHA1 of that text.
    expect(await admin.script('EXISTS', ...shas)).toEqual(shas.map(() => 1));
  } finally {
    await provider.close();
    await admin.quit();
    await server.stop();
  }
});
