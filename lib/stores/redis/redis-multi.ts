import type { LockBatchRequest, LockGrant } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisPort } from './redis-client.port.js';
import { lockTag } from './redis-lock.scripts.js';
import { CALLS } from './redis-script-calls.js';
import { clusterSlot } from './redis-renewal.js';
import type { RedisReplicas } from './redis-replicas.js';
import type { RedisWaiters } from './redis-waiters.js';

const noop = (): void => {};

/** The fencing tokens a request reserves (as a single acquire counts them). */
const blockOf = (request: LockBatchRequest): number =>
  request.fences !== undefined && request.fences > 1 ? Math.floor(request.fences) : 1;

/**
 * `acquireMany` of {@link RedisLockProvider}: one `acquire-many.lua` call
 * (every key free with nobody queued: all set, each with its lease and its
 * block of fencing tokens; else nothing) for all the locks on a standalone
 * Redis; on a Cluster one call per hash slot, one after the other in the
 * order of the requests (the engine's canonical order), and when a later
 * slot's call is refused or fails, the earlier slots' locks are released
 * (by the queue's release script, which hands a key on to a waiter that
 * queued meanwhile) before it answers. With `waitForReplicas`, every grant
 * waits for the replicas, and one that misses gives them all back.
 * @internal
 */
export class RedisMulti {
  /** `replicas`: with `waitForReplicas`, how a grant waits for them. */
  constructor(
    private readonly commands: RedisCommands,
    private readonly client: RedisPort,
    private readonly waiters: RedisWaiters,
    private readonly replicas: RedisReplicas | undefined,
  ) {}

  /** The grants in the order of the requests, or `null` when one key was held or awaited (nothing is kept then). */
  async acquireMany(requests: readonly LockBatchRequest[]): Promise<LockGrant[] | null> {
    if (requests.length === 0) return [];
    const taken: LockBatchRequest[] = [];
    const grants: LockGrant[] = [];
    for (const group of this.slotGroups(requests)) {
      let got: LockGrant[] | null;
      try {
        got = await this.takeGroup(group);
      } catch (err) {
        await this.giveBack(taken);
        throw err;
      }
      if (!got) {
        await this.giveBack(taken);
        return null;
      }
      taken.push(...group);
      grants.push(...got);
    }
    // (in the order of the requests: the slot groups may have reordered them)
    const byKey = new Map(taken.map((r, i) => [r.key, grants[i]]));
    const ordered = requests.map((r) => byKey.get(r.key)!);
    const replicas = this.replicas;
    if (replicas === undefined) return ordered;
    const confirmed = await Promise.allSettled(
      requests.map((r, i) => replicas.confirm({ ...r, wait: false }, ordered[i])),
    );
    const missed = confirmed.find((c) => c.status === 'rejected');
    if (missed === undefined) return ordered;
    // (a grant that missed its replicas was given back by `confirm`; the others go back too: all or none)
    await this.giveBack(requests.filter((_, i) => confirmed[i].status === 'fulfilled')).catch(noop);
    throw missed.reason;
  }

  /**
   * The requests in groups that one script can take: all of them on a
   * standalone Redis; on a Cluster those of one hash slot (a script's keys
   * share a slot), the groups in the order of their first request.
   */
  private slotGroups(requests: readonly LockBatchRequest[]): LockBatchRequest[][] {
    if (!this.client.cluster) return [[...requests]];
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
  private takeGroup(group: readonly LockBatchRequest[]): Promise<LockGrant[] | null> {
    const locks = group.map((r) => ({
      key: r.key,
      owner: r.owner,
      ttl: Math.max(1, Math.ceil(r.ttl)),
      fences: blockOf(r),
    }));
    return this.commands.script({
      operation: 'acquire',
      key: group[0].key,
      call: CALLS.acquireMany,
      input: { locks },
      map: (tokens): LockGrant[] | null =>
        tokens && tokens.map((fencingToken, i) => ({ fencingToken, fences: locks[i].fences })),
      onError: () => group.forEach((r) => this.waiters.cleanUp(r.key, r.owner)),
    });
  }

  /** Gives back what a batch took, before it answers (never rejects: a lease that stays ends on its own). */
  private async giveBack(taken: readonly LockBatchRequest[]): Promise<void> {
    await Promise.all(
      taken.map((r) => this.waiters.release(r.key, r.owner).catch(() => this.waiters.cleanUp(r.key, r.owner))),
    );
  }
}
