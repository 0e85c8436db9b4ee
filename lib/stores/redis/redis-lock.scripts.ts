import { createHash } from 'node:crypto';
import { luaSource } from './scripts/lua-source.cjs';
import type { LockAcquireRequest } from '../../contract/lock-provider.js';

/**
 * A Lua script of {@link RedisLockProvider}: its source (from
 * `scripts/<name>.lua`, includes expanded) and the SHA1 that `EVALSHA` names.
 *
 * Every lock script gets (some of) the same six keys, all under one hash
 * tag so they share a Cluster slot: `{<key>}` the lock (owner token, lease as
 * PX; or a group's marker `#s` / `#x<L>` while shared holders or a
 * semaphore's holders hold it), `{<key>}:fence` the fencing counter,
 * `{<key>}:q` the waiters in arrival order, `{<key>}:w` a hash owner ->
 * `"<deadline ms> <ttl ms> <instance> <n>[ s| x<L>]"` of each waiter,
 * `{<key>}:h` a group's holders scored by lease end, `{<key>}:t` their
 * fencing tokens. The scripts that touch the queue take, after
 * their own arguments, the same last one: `"<waiter lease ms> <instance id of
 * the caller> <channel prefix>"` (one argument, parsed only on the paths that
 * need it: every argument costs every call). Each `.lua` file states its
 * Input and Output in its header.
 * @internal
 */
export interface LockScript {
  readonly source: string;
  readonly sha: string;
}

/** The scripts by the name the provider uses, and their files in `scripts/`. */
const FILES = {
  acquire: 'acquire',
  try: 'try-acquire',
  release: 'release',
  releaseFree: 'release-free',
  leave: 'leave',
  extend: 'extend',
  holder: 'holder',
  groupAcquire: 'group-acquire',
  groupRelease: 'group-release',
  groupExtend: 'group-extend',
  groupTransfer: 'group-transfer',
  extendMany: 'extend-many',
  acquireMany: 'acquire-many',
} as const;

/** @internal */
export type LockScripts = { readonly [name in keyof typeof FILES]: LockScript };

const loaded = new Map<string, LockScript>();

function load(file: string): LockScript {
  let script = loaded.get(file);
  if (!script) {
    const source = luaSource(file);
    script = { source, sha: createHash('sha1').update(source).digest('hex') };
    loaded.set(file, script);
  }
  return script;
}

/**
 * The lock scripts, each read from its `.lua` file when first used (importing
 * the library reads none; a provider reads them all when it is built).
 * @internal
 */
export const SCRIPTS: LockScripts = Object.defineProperties(
  {},
  Object.fromEntries(Object.entries(FILES).map(([name, file]) => [name, { enumerable: true, get: () => load(file) }])),
) as LockScripts;

/** Reads every script now (a provider does when it is built, so that a missing file fails there, not in a call). @internal */
export function readScripts(): void {
  for (const name of Object.keys(FILES) as Array<keyof LockScripts>) void SCRIPTS[name];
}

/**
 * How long a fencing counter outlives what it is kept for, in ms: the lease
 * of the plain lock that holds the name, and the moment the Redis clock (in
 * microseconds) passes the counter (`fence_grace` of
 * `includes/fence-grace.lua`). After a release, nothing of the name is left
 * once this has passed (and the clock has passed its last token, which it
 * has unless the counter runs ahead of it). @internal
 */
export const FENCE_GRACE_MS = 2_000;

/** The lock's own key: the store key as a hash tag. @internal */
export function lockTag(key: string): string {
  return `{${key}}`;
}

/** The six keys of a lock, under one hash tag. @internal */
export function lockKeys(key: string): [string, string, string, string, string, string] {
  const tag = lockTag(key);
  return [tag, `${tag}:fence`, `${tag}:q`, `${tag}:w`, `${tag}:h`, `${tag}:t`];
}

/**
 * The group kind of a request, as the scripts name it: `'s'` for a shared
 * (read) lock, `'x<L>'` for a semaphore of limit L >= 2, `undefined` for a
 * plain lock (exclusive, limit 1), which takes the plain scripts.
 * @internal
 */
export function groupKind(request: Pick<LockAcquireRequest, 'mode' | 'limit'>): string | undefined {
  if (request.mode === 'shared') return 's';
  const limit = request.limit ?? 1;
  return limit > 1 ? `x${Math.floor(limit)}` : undefined;
}
