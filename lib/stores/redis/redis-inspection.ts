import { lockKeys } from './redis-lock.scripts.js';
import type { LockInspectPage, LockInspectRequest, StoredLock } from '../../contract/stored-lock.interface.js';
import { lockHolder, type LockHolder } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { PipelineReply, RedisPort } from './redis-client.port.js';
import { CALLS } from './redis-script-calls.js';

/** Runs one bounded Redis call on a master (the provider's `commandTimeout` and error mapping). */
type RedisCall = <T>(client: RedisPort, send: (client: RedisPort) => Promise<T>) => Promise<T>;

/** SCAN calls per page at most: a prefix with few locks among many other keys still answers in bounded time. */
const MAX_SCANS = 20;
/** Largest SCAN COUNT: the batch grows while it finds few locks. */
const MAX_COUNT = 1_000;

/** Escapes glob characters for SCAN MATCH. */
function glob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** Where a page ends: a master, a SCAN cursor on it, the batch size, and how many keys of that batch were done. */
interface Position {
  node: number;
  cursor: string;
  count: number;
  skip: number;
}

/**
 * One page of the locks under a prefix in Redis: SCAN for the lock keys
 * (`{<prefix>…}`, not their `:fence`/`:q`/`:w` companions) on each master in
 * turn (one, or every master of a Cluster), then one pipeline per batch for
 * the holder, lease, fencing counter (about the grant time, in server microseconds) and queue length. A page holds at most
 * `limit` locks: a batch that has more ends the page inside it, and the next
 * page repeats that SCAN call (same cursor and COUNT) past the keys done.
 * The cursor is `<master>:<SCAN cursor>:<COUNT>:<keys done>`. @internal
 */
export async function inspectRedis(
  commands: RedisCommands,
  client: RedisPort,
  request: LockInspectRequest,
): Promise<LockInspectPage> {
  const call: RedisCall = (redis, send) => commands.call({ operation: 'inspect', send, client: redis });
  const masters = await client.masters();
  const at = parseCursor(request.cursor, request.limit);
  const pattern = `{${glob(request.prefix)}*}`;
  const locks: StoredLock[] = [];
  for (let scans = 0; at.node < masters.length && scans < MAX_SCANS && locks.length < request.limit; scans++) {
    const redis = masters[at.node];
    const [next, found] = scanReply(
      await call(redis, (c) => c.command(['SCAN', at.cursor, 'MATCH', pattern, 'COUNT', at.count])),
    );
    const keys = found.slice(at.skip);
    const room = request.limit - locks.length;
    if (keys.length > room) {
      locks.push(...(await read(redis, call, keys.slice(0, room))));
      at.skip += room;
      break;
    }
    locks.push(...(await read(redis, call, keys)));
    at.skip = 0;
    if (locks.length < request.limit) at.count = Math.min(MAX_COUNT, at.count * 2);
    if (next === '0') {
      at.node++;
      at.cursor = '0';
    } else {
      at.cursor = next;
    }
  }
  return at.node < masters.length ? { locks, cursor: `${at.node}:${at.cursor}:${at.count}:${at.skip}` } : { locks };
}

function parseCursor(cursor: string | undefined, limit: number): Position {
  const m = cursor === undefined ? null : /^(\d+):(\d+):(\d+):(\d+)$/.exec(cursor);
  if (!m) return { node: 0, cursor: '0', count: Math.min(MAX_COUNT, Math.max(10, limit)), skip: 0 };
  return { node: Number(m[1]), cursor: m[2], count: Number(m[3]), skip: Number(m[4]) };
}

/** Reads the locks of SCAN's tagged keys (`{<key>}`). */
async function read(redis: RedisPort, call: RedisCall, tagged: string[]): Promise<StoredLock[]> {
  if (tagged.length === 0) return [];
  const keys = tagged.map((k) => k.slice(1, -1));
  const commands = keys.flatMap((key) => {
    const [lock, fence, queue] = lockKeys(key);
    return [
      ['GET', lock],
      ['PTTL', lock],
      ['GET', fence],
      ['LLEN', queue],
    ];
  });
  const replies = await call(redis, (c) => c.pipeline([['TIME'], ...commands]));
  const serverNowMs = serverMs(replies[0]);
  const rows = keys.map((_, i) =>
    replies
      .slice(1 + i * 4, 5 + i * 4)
      .map(([err, value], j) => (err || value === null ? undefined : j === 0 ? String(value) : Number(value))),
  );
  const holders = await groupHolders(redis, call, keys, rows);
  const locks: StoredLock[] = [];
  const read = Date.now();
  keys.forEach((key, i) => {
    const [owner, pttl, fence, waiters] = rows[i];
    // Released or expired between SCAN and the read: not held.
    if (typeof owner !== 'string' || typeof pttl !== 'number' || !(pttl > 0)) return;
    const group = holders.get(key);
    if (group) {
      // A group (shared holders, or a semaphore's): one entry per holder; the marker's lease ends with the last holder's.
      const { mode, permits, members, tokens, serverNowMs } = group;
      const last = Math.max(...members.map(([, end]) => end));
      for (const [member, end] of members) {
        const remainingMs = pttl - (last - end);
        if (remainingMs <= 0) continue;
        const token = tokens.get(member);
        const fencingToken = token ?? Number(fence ?? 0);
        // A token is drawn at or just above the server clock in microseconds (draw-fences.lua): how long ago it was drawn is how long ago the grant was.
        const heldSince =
          token === undefined || serverNowMs === undefined
            ? undefined
            : read - Math.max(0, serverNowMs - Math.floor(token / 1000));
        locks.push({
          key,
          owner: member,
          permits,
          mode,
          fencingToken,
          remainingMs,
          ...(heldSince === undefined ? {} : { heldSince }),
          waiters: Number(waiters ?? 0),
        });
      }
      return;
    }
    // The counter is the last token of the grant's block: at most 15 above the grant's, which is the server clock then (unless the counter ran ahead of it).
    const heldSince =
      fence === undefined || fence === null || serverNowMs === undefined
        ? undefined
        : read - Math.max(0, serverNowMs - Math.floor(Number(fence) / 1000));
    locks.push({
      key,
      owner,
      permits: 1,
      fencingToken: Number(fence ?? 0),
      remainingMs: pttl,
      ...(heldSince === undefined ? {} : { heldSince }),
      waiters: Number(waiters ?? 0),
    });
  });
  return locks;
}

/** A group's holders as inspection shows them: their mode, the permits of the key, each holder's lease end (server ms) and fencing token, and the server clock (ms) when read. */
interface GroupHolders {
  mode: 'shared' | 'exclusive';
  permits: number;
  members: Array<[string, number]>;
  tokens: Map<string, number>;
  serverNowMs: number | undefined;
}

/** The holders of the keys a group holds (its marker `#s` / `#x<L>` in the lock key), by key: one more pipeline, only when there are such keys. */
async function groupHolders(
  redis: RedisPort,
  call: RedisCall,
  keys: string[],
  rows: unknown[][],
): Promise<Map<string, GroupHolders>> {
  const groups = keys
    .map((key, i) => ({ key, marker: rows[i][0] }))
    .filter((g): g is { key: string; marker: string } => typeof g.marker === 'string' && g.marker.startsWith('#'));
  const found = new Map<string, GroupHolders>();
  if (groups.length === 0) return found;
  const commands = groups.flatMap(({ key }) => {
    const keys = lockKeys(key);
    return [
      ['ZRANGE', keys[4], '0', '-1', 'WITHSCORES'],
      ['HGETALL', keys[5]],
    ];
  });
  const replies = await call(redis, (c) => c.pipeline([['TIME'], ...commands]));
  const serverNowMs = serverMs(replies[0]);
  groups.forEach(({ key, marker }, i) => {
    const [err, flat] = replies[1 + i * 2] ?? [];
    if (err || !Array.isArray(flat)) return;
    const members = pairs(flat).map(([member, score]): [string, number] => [member, Number(score)]);
    const [tokensErr, byOwner] = replies[2 + i * 2] ?? [];
    const tokens = new Map<string, number>();
    if (!tokensErr) for (const [owner, token] of entries(byOwner)) tokens.set(owner, Number(token));
    const shared = marker === '#s';
    found.set(key, {
      mode: shared ? 'shared' : 'exclusive',
      permits: shared ? 1 : Number(marker.slice(2)),
      members,
      tokens,
      serverNowMs,
    });
  });
  return found;
}

/** SCAN's reply: the next cursor and the keys found. */
function scanReply(reply: unknown): [string, string[]] {
  const [next, found] = Array.isArray(reply) ? reply : [];
  return [String(next ?? '0'), Array.isArray(found) ? found.map(String) : []];
}

/** `[member, score]` pairs of ZRANGE WITHSCORES: flat in RESP2, pairs in RESP3. */
function pairs(reply: unknown[]): Array<[string, unknown]> {
  if (reply.every((r) => Array.isArray(r))) return (reply as unknown[][]).map((r) => [String(r[0]), r[1]]);
  const out: Array<[string, unknown]> = [];
  for (let j = 0; j + 1 < reply.length; j += 2) out.push([String(reply[j]), reply[j + 1]]);
  return out;
}

/** The fields of HGETALL's reply: an object (ioredis, node-redis), a `Map` (a RESP3 type mapping), or a flat array. */
function entries(reply: unknown): Array<[string, unknown]> {
  if (reply instanceof Map) return [...reply.entries()].map(([k, v]) => [String(k), v]);
  if (Array.isArray(reply)) return pairs(reply);
  return reply !== null && typeof reply === 'object' ? Object.entries(reply) : [];
}

/** The server clock in ms from a pipelined TIME's `[error, reply]`, or `undefined`. */
function serverMs(entry: PipelineReply | undefined): number | undefined {
  const [err, time] = entry ?? [];
  return !err && Array.isArray(time) ? Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) : undefined;
}

/** Who holds `key` (`holder()`): one small script; of a group, the holder whose lease ends last. @internal */
export function holderInRedis(commands: RedisCommands, key: string): Promise<LockHolder | null> {
  const map = (reply: { owner: string; pttl: number } | null): LockHolder | null =>
    reply && lockHolder(reply.owner, reply.pttl);
  return commands.script({ operation: 'holder', key, call: CALLS.holder, input: { key }, map });
}
