import type { LockExtension } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisGroups } from './redis-group.js';
import { lockTag } from './redis-lock.scripts.js';
import { isNoScript, type PipelineReply, type RedisPort } from './redis-client.port.js';
import { CALLS, scriptOf } from './redis-script-calls.js';

/** CRC16-CCITT (XMODEM) table, as Redis Cluster hashes keys. */
const CRC16 = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/**
 * The Redis Cluster slot of `key` (CRC16 of the key, or of its hash tag: the
 * text between the first `{` and the next `}` when not empty), as
 * `CLUSTER KEYSLOT` and ioredis compute it. @internal
 */
export function clusterSlot(key: string): number {
  let bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ b) & 0xff];
  return crc % 16384;
}

/**
 * `extendMany` of {@link RedisLockProvider}: the places in a group granted
 * through the provider each by its own group-extend call ({@link RedisGroups}),
 * the other locks in one batch: one `extend-many.lua` call for all of them on
 * a standalone Redis; on a Cluster, one call per slot (a script's keys share
 * a slot), those of one master sent as one pipeline: a round trip per
 * master. @internal
 */
export class RedisRenewal {
  constructor(
    private readonly commands: RedisCommands,
    private readonly client: RedisPort,
    private readonly groups: RedisGroups,
  ) {}

  /** The answers in the order of `locks`: whether each owner still held its lock, now with the new lease. */
  extendMany(locks: readonly LockExtension[]): Promise<boolean[]> {
    const inGroup = locks.map((l) => this.groups.has(l.key, l.owner));
    if (!inGroup.includes(true)) return extendPlain(this.commands, this.client, locks);
    const others = locks.filter((_, i) => !inGroup[i]);
    const extended = locks
      .filter((_, i) => inGroup[i])
      .map((l) => this.groups.extend(l.key, l.owner, Math.max(1, Math.ceil(l.ttl))));
    return Promise.all([
      Promise.all(extended),
      others.length > 0 ? extendPlain(this.commands, this.client, others) : [],
    ]).then(([mine, rest]) => {
      let g = 0;
      let r = 0;
      return inGroup.map((isGroup) => (isGroup ? mine[g++] : rest[r++]));
    });
  }
}

/** The plain locks' batch of {@link RedisRenewal.extendMany}. */
async function extendPlain(
  commands: RedisCommands,
  client: RedisPort,
  locks: readonly LockExtension[],
): Promise<boolean[]> {
  if (locks.length === 0) return [];
  if (!client.cluster)
    return commands.script({
      operation: 'extend',
      key: locks[0].key,
      call: CALLS.extendMany,
      input: { locks },
      map: (held) => held,
    });
  // Slot groups (indexes into locks), and the slot groups of each master.
  const slots = new Map<number, number[]>();
  locks.forEach((l, i) => {
    const slot = clusterSlot(lockTag(l.key));
    const group = slots.get(slot);
    if (group) group.push(i);
    else slots.set(slot, [i]);
  });
  const masters = new Map<string, number[][]>();
  for (const [slot, group] of slots) {
    const node = client.masterOf(slot) ?? `slot ${slot}`;
    const groups = masters.get(node);
    if (groups) groups.push(group);
    else masters.set(node, [group]);
  }
  const out: boolean[] = new Array<boolean>(locks.length);
  await Promise.all(
    [...masters.values()].map(async (groups) => {
      const replies = await commands.call({
        operation: 'extend',
        key: locks[groups[0][0]].key,
        send: (c) =>
          pipelined(
            c,
            groups.map((g) => g.map((i) => locks[i])),
          ),
      });
      groups.forEach((g, j) => g.forEach((i, k) => (out[i] = replies[j][k])));
    }),
  );
  return out;
}

/** One EVALSHA per group in one pipeline (one master); the groups that find the script missing go again by EVAL. */
async function pipelined(client: RedisPort, groups: LockExtension[][]): Promise<boolean[][]> {
  const call = CALLS.extendMany;
  const script = scriptOf(call);
  const route = lockTag(groups[0][0].key);
  const send = (indexes: number[], byEval: boolean): Promise<PipelineReply[]> =>
    client.pipeline(
      indexes.map((i) => {
        const input = { locks: groups[i] };
        const keys = call.keys(input);
        return [
          byEval ? 'EVAL' : 'EVALSHA',
          byEval ? script.source : script.sha,
          keys.length,
          ...keys,
          ...call.args(input),
        ];
      }),
      route,
    );
  const all = groups.map((_, i) => i);
  const results = await send(all, false);
  const missing = all.filter((i) => isNoScript(results[i]?.[0]));
  if (missing.length > 0) (await send(missing, true)).forEach((r, j) => (results[missing[j]] = r));
  return results.map(([err, reply]) => {
    if (err) throw err;
    return call.decode(reply);
  });
}
