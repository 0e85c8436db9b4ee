import type { LockBatchRequest, LockGrant } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisPort } from './redis-client.port.js';
import { lockTag } from './redis-lock.scripts.js';
import { CALLS } from './redis-script-calls.js';
import { clusterSlot } from './redis-renewal.js';
import { replicated, type ReplicaWait } from './redis-replicas.js';

/** What {@link acquireManyInRedis} needs from its provider. @internal */
export interface RedisMultiHost {
  readonly commands: RedisCommands;
  readonly client: RedisPort;
  /** The provider's owner-checked release (hands the key on to a waiter that queued meanwhile). */
  readonly release: (key: string, owner: string) => Promise<boolean>;
  /** After a failed call: gives the key back if the script ran after all (best effort, in the background). */
  readonly cleanUp: (key: string, owner: string) => void;
  /** With `waitForReplicas`: how a grant waits for replicas. */
  readonly replicas: ReplicaWait | undefined;
}

const noop = (): void => {};

/** The fencing tokens a request reserves (as a single acquire counts them). */
const blockOf = (request: LockBatchRequest): number => (request.fences !== undefined && request.fences > 1 ? Math.floor(request.fences) : 1);

/**
 * The requests in groups that one script can take: all of them on a
 * standalone Redis; on a Cluster those of one hash slot (a script's keys
 * share a slot), the groups in the order of their first request.
 */
function slotGroups(client: RedisPort, requests: readonly LockBatchRequest[]): LockBatchRequest[][] {
  if (!client.cluster) return [[...requests]];
  const slots = new Map<number, LockBatchRequest[]>();
  for (const request of requests) {
    const slot = clusterSlot(lockTag(request.key));
    const group = slots.get(slot);
    if (group) group.push(request);
    else slots.set(slot, [request]);
  }
  return [...slots.values()];
}

/** One `acquire-many.lua` call for a group: its grants, or `null` when one key was held or awaited. */
function takeGroup(host: RedisMultiHost, group: readonly LockBatchRequest[]): Promise<LockGrant[] | null> {
  const locks = group.map((r) => ({ key: r.key, owner: r.owner, ttl: Math.max(1, Math.ceil(r.ttl)), fences: blockOf(r) }));
  return host.commands.script({
    operation: 'acquire',
    key: group[0].key,
    call: CALLS.acquireMany,
    input: { locks },
    map: (tokens): LockGrant[] | null => tokens && tokens.map((fencingToken, i) => ({ fencingToken, fences: locks[i].fences })),
    onError: () => group.forEach((r) => host.cleanUp(r.key, r.owner)),
  });
}

/** Gives back what a batch took, before it answers (never rejects: a lease that stays ends on its own). */
async function giveBack(host: RedisMultiHost, taken: readonly LockBatchRequest[]): Promise<void> {
  await Promise.all(taken.map((r) => host.release(r.key, r.owner).catch(() => host.cleanUp(r.key, r.owner))));
}

/**
 * `acquireMany` of {@link RedisLockProvider}: one `acquire-many.lua` call
 * (every key free with nobody queued: all set, each with its lease and its
 * block of fencing tokens; else nothing) for all the locks on a standalone
 * Redis; on a Cluster one call per hash slot, one after the other in the
 * order of the requests (the engine's canonical order), and when a later
 * slot's call is refused or fails, the earlier slots' locks are released
 * before it answers. With `waitForReplicas`, every grant waits for the
 * replicas, and one that misses gives them all back. @internal
 */
export async function acquireManyInRedis(host: RedisMultiHost, requests: readonly LockBatchRequest[]): Promise<LockGrant[] | null> {
  if (requests.length === 0) return [];
  const taken: LockBatchRequest[] = [];
  const grants: LockGrant[] = [];
  for (const group of slotGroups(host.client, requests)) {
    let got: LockGrant[] | null;
    try {
      got = await takeGroup(host, group);
    } catch (err) {
      await giveBack(host, taken);
      throw err;
    }
    if (!got) {
      await giveBack(host, taken);
      return null;
    }
    taken.push(...group);
    grants.push(...got);
  }
  // (in the order of the requests: the slot groups may have reordered them)
  const byKey = new Map(taken.map((r, i) => [r.key, grants[i]]));
  const ordered = requests.map((r) => byKey.get(r.key)!);
  const replicas = host.replicas;
  if (replicas === undefined) return ordered;
  const confirmed = await Promise.allSettled(requests.map((r, i) => replicated(replicas, { ...r, wait: false }, ordered[i])));
  const missed = confirmed.find((c) => c.status === 'rejected');
  if (missed === undefined) return ordered;
  // (a grant that missed its replicas was given back by `replicated`; the others go back too: all or none)
  await giveBack(
    host,
    requests.filter((_, i) => confirmed[i].status === 'fulfilled'),
  ).catch(noop);
  throw missed.reason;
}
