import { LockOptionsError } from '../../errors/lock.errors.js';
import { limitMismatchMessage } from '../../errors/lock.messages.js';
import type { LockExtension, LockGrant } from '../../contract/lock-provider.js';
import type { RedisArgs } from './redis-client.port.js';
import { lockKeys, lockTag, SCRIPTS, type LockScript, type LockScripts } from './redis-lock.scripts.js';

/**
 * Each Lua script of the Redis store as one typed call: its keys and
 * arguments from a typed input, and its reply decoded, in one place, into a
 * discriminated union (from RESP2 or RESP3 replies alike: numbers may come
 * as numbers or strings, and a `nil` as `null`). The scripts' `Input:` /
 * `Output:` headers in `scripts/*.lua` are what these follow.
 * @internal
 */
export interface ScriptCall<I, O> {
  /** The script's name in {@link SCRIPTS}. */
  readonly name: keyof LockScripts;
  readonly keys: (input: I) => string[];
  readonly args: (input: I) => RedisArgs;
  readonly decode: (reply: unknown) => O;
}

/** The scripts {@link scriptOf} found so far, by name: a plain object, so a call's script is one property read. */
const found: { -readonly [name in keyof LockScripts]?: LockScript } = {};

/** The script of a call (its source and SHA), read when first used. @internal */
export const scriptOf = (call: ScriptCall<never, unknown>): LockScript =>
  found[call.name] ?? (found[call.name] = SCRIPTS[call.name]);

/** A grant the script made from the queue to a waiter of the caller's instance (no PUBLISH was sent for it). @internal */
export interface HandOff {
  readonly owner: string;
  readonly token: number;
}

/** `acquire` / `group-acquire`: granted (with the first fencing token), not yet (ms until the first holder's lease ends), or another limit recorded. @internal */
export type AcquireReply =
  | { readonly status: 'granted'; readonly token: number; readonly handOffs: HandOff[] }
  | { readonly status: 'waiting'; readonly holderTtl: number; readonly handOffs: HandOff[] }
  | { readonly status: 'limit'; readonly limit: number; readonly handOffs: HandOff[] };

/** `try-acquire`: granted, held, or waiters queued (or a semaphore holds the key: the full script decides). @internal */
export type TryReply =
  { readonly status: 'granted'; readonly token: number } | { readonly status: 'held' } | { readonly status: 'queued' };

/** `release`, `group-release`, `leave`: whether the owner held it, and the grants made from the queue. @internal */
export interface ReleaseReply {
  readonly held: boolean;
  readonly handOffs: HandOff[];
}

/** `group-transfer`: handed over with a new token, or not (the giver no longer held a place). @internal */
export type TransferReply =
  | { readonly status: 'granted'; readonly token: number; readonly handOffs: HandOff[] }
  | { readonly status: 'not-held'; readonly handOffs: HandOff[] };

/** `release-free`. @internal */
export type ReleaseFreeReply = 'freed' | 'not-owner' | 'queued' | 'group';

/** `extend`. @internal */
export type ExtendReply = 'extended' | 'not-owner' | 'group';

/** `holder`: who holds the key and for how long, or nobody. @internal */
export type HolderReply = { readonly owner: string; readonly pttl: number } | null;

/** The limit a kind asks for (`'x3'` → 3; plain → 1; shared: none). */
function limitOf(kind: string | undefined): number {
  return kind === undefined ? 1 : Number(kind.slice(1));
}

/**
 * Throws the limit-disagreement error when a script answered that the key's
 * exclusive holders or waiters were recorded with another limit than this
 * request's.
 * @internal
 */
export function checkLimit(reply: AcquireReply, key: string, kind: string | undefined): void {
  if (reply.status === 'limit') throw new LockOptionsError(limitMismatchMessage(key, reply.limit, limitOf(kind)));
}

/** An acquire reply as a grant (of a block of `fences` tokens, when more than one was asked for) or `null`. @internal */
export function grantOf(reply: AcquireReply, fences = 1): LockGrant | null {
  if (reply.status !== 'granted') return null;
  return fences === 1 ? { fencingToken: reply.token } : { fencingToken: reply.token, fences };
}

/** The reply as an array (a script's table), or `[]`. */
const list = (reply: unknown): unknown[] => (Array.isArray(reply) ? reply : []);

/** The `owner, token, ...` tail of a reply from index `at` on. */
function handOffs(reply: unknown[], at: number): HandOff[] {
  const out: HandOff[] = [];
  for (let i = at; i + 1 < reply.length; i += 2) out.push({ owner: String(reply[i]), token: Number(reply[i + 1]) });
  return out;
}

function decodeAcquire(raw: unknown): AcquireReply {
  const reply = list(raw);
  const status = Number(reply[0]);
  const value = Number(reply[1]);
  const rest = handOffs(reply, 2);
  if (status === 1) return { status: 'granted', token: value, handOffs: rest };
  if (status === -1) return { status: 'limit', limit: value, handOffs: rest };
  return { status: 'waiting', holderTtl: value, handOffs: rest };
}

function decodeRelease(raw: unknown): ReleaseReply {
  const reply = list(raw);
  return { held: Number(reply[0]) === 1, handOffs: handOffs(reply, 1) };
}

/** Input of the scripts on a lock's six keys: the common last argument (`<waiter lease> <instance> <channel prefix>`). */
interface OnLock {
  readonly key: string;
  readonly common: string;
}

/** A script on the six keys of a lock, whose last argument is the common one. */
function onLock<I extends OnLock, O>(
  name: keyof LockScripts,
  own: (input: I) => RedisArgs,
  decode: (reply: unknown) => O,
): ScriptCall<I, O> {
  return { name, keys: (i) => lockKeys(i.key), args: (i) => [...own(i), i.common], decode };
}

/** Modes of an acquire: `'0'` a try, `'1'` queue, `'2'` re-check (and refresh the queue entry). @internal */
export type AcquireMode = '0' | '1' | '2';

/** The typed calls, by script. @internal */
export const CALLS = {
  acquire: onLock(
    'acquire',
    (i: OnLock & { owner: string; ttl: number; mode: AcquireMode; fences: number }) => [
      i.owner,
      i.ttl,
      i.mode,
      i.fences,
    ],
    decodeAcquire,
  ),
  groupAcquire: onLock(
    'groupAcquire',
    (i: OnLock & { owner: string; ttl: number; mode: AcquireMode; kind: string }) => [i.owner, i.ttl, i.mode, i.kind],
    decodeAcquire,
  ),
  release: onLock('release', (i: OnLock & { owner: string }) => [i.owner], decodeRelease),
  groupRelease: onLock('groupRelease', (i: OnLock & { owner: string }) => [i.owner], decodeRelease),
  leave: onLock('leave', (i: OnLock & { owner: string }) => [i.owner], decodeRelease),
  groupTransfer: onLock(
    'groupTransfer',
    (i: OnLock & { from: string; to: string; ttl: number }) => [i.from, i.to, i.ttl],
    (raw): TransferReply => {
      const reply = list(raw);
      return Number(reply[0]) === 1
        ? { status: 'granted', token: Number(reply[1]), handOffs: handOffs(reply, 2) }
        : { status: 'not-held', handOffs: handOffs(reply, 1) };
    },
  ),
  try: {
    name: 'try',
    keys: ({ key }) => [lockTag(key), `${lockTag(key)}:fence`, `${lockTag(key)}:q`],
    args: (i) => (i.fences === undefined ? [i.owner, i.ttl] : [i.owner, i.ttl, i.fences]),
    decode: (raw) => {
      const token = Number(raw);
      return token > 0 ? { status: 'granted', token } : token < 0 ? { status: 'queued' } : { status: 'held' };
    },
  } satisfies ScriptCall<{ key: string; owner: string; ttl: number; fences?: number }, TryReply>,
  releaseFree: {
    name: 'releaseFree',
    keys: ({ key }) => [lockTag(key), `${lockTag(key)}:q`, `${lockTag(key)}:fence`],
    args: (i) => [i.owner],
    decode: (raw) => (['not-owner', 'freed', 'queued', 'group'] as const)[Number(raw)] ?? 'not-owner',
  } satisfies ScriptCall<{ key: string; owner: string }, ReleaseFreeReply>,
  extend: {
    name: 'extend',
    keys: ({ key }) => [lockTag(key), `${lockTag(key)}:fence`],
    args: (i) => [i.owner, i.ttl],
    decode: (raw) => (['not-owner', 'extended', 'group'] as const)[Number(raw)] ?? 'not-owner',
  } satisfies ScriptCall<{ key: string; owner: string; ttl: number }, ExtendReply>,
  groupExtend: {
    name: 'groupExtend',
    keys: ({ key }) => [lockTag(key), `${lockTag(key)}:h`, `${lockTag(key)}:t`],
    args: (i) => [i.owner, i.ttl],
    decode: (raw) => Number(raw) === 1,
  } satisfies ScriptCall<{ key: string; owner: string; ttl: number }, boolean>,
  holder: {
    name: 'holder',
    keys: ({ key }) => [lockTag(key), `${lockTag(key)}:h`],
    args: () => [],
    decode: (raw) => (Array.isArray(raw) ? { owner: String(raw[0]), pttl: Number(raw[1]) } : null),
  } satisfies ScriptCall<{ key: string }, HolderReply>,
  extendMany: {
    name: 'extendMany',
    keys: ({ locks }) => {
      const tags = locks.map((l) => lockTag(l.key));
      return [...tags, ...tags.map((k) => `${k}:fence`)];
    },
    args: ({ locks }) => [...locks.map((l) => l.owner), ...locks.map((l) => Math.max(1, Math.ceil(l.ttl)))],
    decode: (raw) => list(raw).map((r) => Number(r) === 1),
  } satisfies ScriptCall<{ locks: readonly LockExtension[] }, boolean[]>,
  acquireMany: {
    name: 'acquireMany',
    keys: ({ locks }) => locks.flatMap((l) => [lockTag(l.key), `${lockTag(l.key)}:fence`, `${lockTag(l.key)}:q`]),
    args: ({ locks }) => locks.flatMap((l) => [l.owner, l.ttl, l.fences]),
    decode: (raw) => (Array.isArray(raw) ? raw.map(Number) : null),
  } satisfies ScriptCall<
    { locks: ReadonlyArray<{ key: string; owner: string; ttl: number; fences: number }> },
    number[] | null
  >,
} as const;
