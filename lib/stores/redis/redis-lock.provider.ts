import {
  LockProvider,
  type LockAcquireRequest,
  type LockExtension,
  type LockGrant,
  type LockHolder,
} from '../../contract/lock-provider.js';
import type { LockBatchRequest, LockStoreSetup } from '../../contract/lock-provider.js';
import type { LockInspectPage, LockInspectRequest } from '../../contract/stored-lock.interface.js';
import { newOwnerToken } from '../../shared/owner-token.js';
import { now } from '../../shared/clock.js';
import { RedisClients, redisSettings } from './redis-clients.js';
import { RedisCommands } from './redis-commands.js';
import { RedisWaiters } from './redis-waiters.js';
import { rest } from './redis-waiter.js';
import { groupKind, readScripts } from './redis-lock.scripts.js';
import { CALLS, grantOf } from './redis-script-calls.js';
import { RedisGroups } from './redis-group.js';
import { holderInRedis, inspectRedis } from './redis-inspection.js';
import { RedisReplicas } from './redis-replicas.js';
import type { RedisClient, RedisLockProviderOptions } from './redis-lock-provider.interface.js';
import { RedisRenewal } from './redis-renewal.js';
import { RedisMulti } from './redis-multi.js';
import { RedisEvictionCheck } from './redis-eviction.js';

/** Bound of the provider's memory of contended keys (past it, it starts over). */
const MAX_CONTENDED_KEYS = 1_024;

/**
 * Locks in Redis (standalone or Cluster), shared by every instance that uses the same Redis
 * (docs/stores.md, "How it works").
 *
 * - Acquire is one round trip: a Lua script that sets the key to the owner token with a lease and
 *   draws a fencing token (a block of `request.fences`: see `localHandOff`) from a per-key counter
 *   raised to the server clock in microseconds. A wait starts with the small script a try uses; only
 *   when that finds the key held does it queue with the full one, and the provider then remembers
 *   the key as contended (as after a shared or semaphore wait, which queues at once), so that its
 *   next waits queue at once. Release and extend are
 *   owner-checked scripts, run by `EVALSHA` (`EVAL` when the server's script cache was flushed).
 * - Waiters queue in Redis (FIFO across instances). Release grants the key to the first live waiter
 *   inside the same script, and tells a waiter of another instance on that instance's own channel.
 *   No polling: a waiter also re-checks when the holder's lease would end, and refreshes its queue
 *   entry, which expires if its process dies.
 * - Every call is bounded by `commandTimeout`, also while the client reconnects, and fails with {@link LockStoreError}.
 * - The client: ioredis (the default, built from a URL or options), iovalkey, or node-redis, behind one
 *   client port (`redis-client.port.ts`) with one adapter per library.
 * - The server's eviction policy is checked at connect and after every reconnect (`evictionCheck`).
 * - Shared (read/write) locks and semaphores (`limit`): see `RedisGroups`. Several names at once
 *   (`acquireMany`): one script per Cluster slot, see `RedisMulti`.
 *
 * Keys, for a lock key `k` (the module's prefix included): `{k}` (the lock),
 * `{k}:fence`, `{k}:q`, `{k}:w`, `{k}:h`, `{k}:t`, all in one Cluster slot.
 *
 * Made of (internal), each called by the provider and given what it calls in its constructor, none
 * calling back: `RedisGroups`, `RedisMulti`, `RedisRenewal`, `RedisReplicas` above `RedisWaiters` (the
 * queue's scripts, the local waiters), above `RedisCommands` (the command layer), `RedisClients`
 * (the client port's adapters) and `RedisEvictionCheck`; the `.lua` files of `scripts/`.
 *
 * @example
 * ```ts
 * const provider = new RedisLockProvider({ redis: 'redis://127.0.0.1:6379', commandTimeout: 1_000 });
 * const locks = new LockManager({ provider });
 * ```
 */
export class RedisLockProvider extends LockProvider {
  /** `'redis'`. */
  readonly kind = 'redis';
  /** A grant reserves `request.fences` fencing tokens (in the same script): the engine hands locks over locally. */
  override readonly fenceBlocks = true;
  /** Semaphores (`limit`) and read/write locks (`mode: 'shared'`). */
  override readonly supports = { limit: true, shared: true } as const;
  /** The client that runs the scripts (yours, or the ioredis one the provider opened). */
  readonly client: RedisClient;
  private readonly clients: RedisClients;
  private readonly commands: RedisCommands;
  private readonly waiters: RedisWaiters;
  /** Shared holders and semaphores: their scripts, and the owners whose release and extend are theirs. */
  private readonly groups: RedisGroups;
  private readonly renewal: RedisRenewal;
  private readonly multi: RedisMulti;
  private readonly commandTimeout: number;
  /** With `waitForReplicas`: how a grant waits for replicas before it is answered. */
  private readonly replicas: RedisReplicas | undefined;
  /** This provider's id in queue entries: hand-offs to its waiters are announced on `<channel>:<instance>`. */
  private readonly instance = newOwnerToken().slice(0, 16);
  /** Owners granted after queueing: their release goes straight to the full script (the queue is likely not empty). */
  private readonly afterWait = new Set<string>();
  /** Keys a wait of this provider lately found held or queued: their next wait queues at once (the full script), instead of trying the small script first. */
  private readonly contended = new Set<string>();
  /** The server's eviction policy (`evictionCheck`). */
  private readonly eviction: RedisEvictionCheck;

  constructor(options: RedisLockProviderOptions) {
    super();
    const { redis, commandTimeout, channel, waiterLease, waitForReplicas, evictionCheck, logger } =
      redisSettings(options);
    this.commandTimeout = commandTimeout;
    readScripts();
    this.clients = new RedisClients(redis, commandTimeout, waitForReplicas);
    this.client = this.clients.main.client as RedisClient;
    this.commands = new RedisCommands(this.clients, commandTimeout);
    this.eviction = new RedisEvictionCheck(this.clients, this.commands, evictionCheck, logger);
    this.waiters = new RedisWaiters(this.clients, this.commands, channel, this.instance, waiterLease);
    this.groups = new RedisGroups(this.commands, this.waiters);
    this.renewal = new RedisRenewal(this.commands, this.clients.main, this.groups);
    this.replicas =
      waitForReplicas > 0 ? new RedisReplicas(this.commands, this.waiters, waitForReplicas, commandTimeout) : undefined;
    this.multi = new RedisMulti(this.commands, this.clients.main, this.waiters, this.replicas);
  }

  /** The cause of the latest connection failure, in words ("Redis at 127.0.0.1:6380 refused the connection (ECONNREFUSED)"), or `undefined` while connected without trouble. Never holds the password. */
  lastFailure(): string | undefined {
    return this.clients.lastFailure();
  }

  /** {@inheritDoc LockProvider.acquire} */
  acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const granted = this.eviction.before(() => this.take(request));
    const replicas = this.replicas;
    if (replicas === undefined) return granted;
    // A grant that did not replicate went back: no release of it follows.
    const forget = (err: unknown): never => {
      if (!this.afterWait.delete(request.owner)) this.groups.forget(request.key, request.owner);
      throw err;
    };
    return granted.then((grant) => grant && replicas.confirm(request, grant).catch(forget));
  }

  /** {@inheritDoc LockProvider.extend} */
  extend(key: string, owner: string, ttl: number): Promise<boolean> {
    const ms = Math.max(1, Math.ceil(ttl));
    if (this.groups.has(key, owner)) return this.groups.extend(key, owner, ms);
    // (a group holds the key, maybe granted to this owner by another provider)
    const map = (reply: 'extended' | 'not-owner' | 'group'): boolean | Promise<boolean> =>
      reply === 'group' ? this.groups.extend(key, owner, ms) : reply === 'extended';
    return this.commands.script({ operation: 'extend', key, call: CALLS.extend, input: { key, owner, ttl: ms }, map });
  }

  /**
   * {@inheritDoc LockProvider.release}
   * A lock granted without queueing is released by a small script; only when that finds waiters
   * (or the grant came after a wait) does the full release with hand-off run.
   */
  release(key: string, owner: string): Promise<boolean> {
    if (this.groups.has(key, owner)) return this.groups.release(key, owner);
    if (this.afterWait.delete(owner)) return this.waiters.release(key, owner);
    return this.commands.script({
      operation: 'release',
      key,
      call: CALLS.releaseFree,
      input: { key, owner },
      map: (reply) =>
        reply === 'queued'
          ? this.waiters.release(key, owner)
          : reply === 'group'
            ? this.groups.release(key, owner)
            : reply === 'freed',
    });
  }

  /** {@inheritDoc LockProvider.transfer} One script (`group-transfer`): the holders swap owners, the counter draws the token. */
  transfer(key: string, from: string, to: string, ttl: number): Promise<LockGrant | null> {
    return this.groups.transfer(key, from, to, Math.max(1, Math.ceil(ttl)));
  }

  /** {@inheritDoc LockProvider.coalesce} The calls leave in one socket write (a standalone client; a Cluster client sends them as it would anyway). */
  coalesce<T>(send: () => T): T {
    return this.commands.coalesce(send);
  }

  /** {@inheritDoc LockProvider.holder} One small script (GET and PTTL of the lock key; of a group, the holder whose lease ends last). */
  holder(key: string): Promise<LockHolder | null> {
    return holderInRedis(this.commands, key);
  }

  /** {@inheritDoc LockProvider.inspect} SCAN on every master. */
  inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    return inspectRedis(this.commands, this.clients.main, request);
  }

  /** {@inheritDoc LockProvider.watchConnection} The client's `close` (for a Cluster also a node that leaves): a Redis restarted without persistence comes back empty. */
  watchConnection(onLost: () => void): () => void {
    return this.clients.watchConnection(onLost);
  }

  /** {@inheritDoc LockProvider.setupCheck} The eviction policy (`evictionCheck`). */
  setupCheck(): LockStoreSetup {
    return this.eviction.setup();
  }

  /** {@inheritDoc LockProvider.ping} */
  async ping(): Promise<number> {
    const started = now();
    await Promise.all([
      this.commands.call({ operation: 'ping', send: (c) => c.command(['PING']) }),
      this.eviction.refresh(),
    ]);
    // (a rejected SELECT is answered before the PING that followed it on the same connection)
    const rejected = this.clients.dbRejected;
    if (rejected !== undefined) throw this.clients.storeError('ping', this.clients.main, rejected, '');
    return now() - started;
  }

  /** Resolves local waiters with `null` (they leave the queue), closes the subscriber connection, and quits the main connection if the provider opened it. A client you passed in stays open. */
  async close(): Promise<void> {
    if (this.commands.closed) return;
    this.commands.close();
    this.eviction.close();
    this.afterWait.clear();
    this.groups.clear();
    const subscriber = await this.waiters.close();
    await this.clients.close(subscriber);
  }

  /** {@link acquire}, before replicas are asked. */
  private take(request: LockAcquireRequest): Promise<LockGrant | null> {
    const ttl = Math.max(1, Math.ceil(request.ttl));
    const kind = groupKind(request);
    if (kind !== undefined) {
      // A group wait queues at once: a plain wait after it must not try first (a later caller would queue ahead of it).
      if (request.wait) this.markContended(request.key);
      return this.groups.take(request, ttl, kind);
    }
    const fences = request.fences !== undefined && request.fences > 1 ? Math.floor(request.fences) : 1;
    if (!request.wait || request.signal?.aborted || request.waitTimeout === 0) {
      if (fences > 1)
        return this.waiters.attempt(
          { key: request.key, owner: request.owner, ttl, fences, kind: undefined },
          '0',
          (reply) => grantOf(reply, fences),
        );
      return this.tryOnce(request.key, request.owner, ttl);
    }
    // (a wait shorter than a call's bound queues at once: its timer, not the call, decides when it ends)
    const short = request.waitTimeout !== undefined && request.waitTimeout < this.commandTimeout;
    if (!short && !this.contended.has(request.key)) return this.waitFirst(request, ttl, fences);
    return this.queue(request, ttl, fences);
  }

  /** Queues a wait for a plain lock; a grant after queueing is released by the full script, one by the first call leaves the key uncontended. */
  private queue(request: LockAcquireRequest, ttl: number, fences: number): Promise<LockGrant | null> {
    return this.waiters.queue(request, ttl, fences).then((grant) => {
      if (grant?.queued) this.afterWait.add(request.owner);
      else if (grant) this.contended.delete(request.key);
      return grant;
    });
  }

  /**
   * The first call of a wait for a key not seen contended: the small try
   * script (most such waits find the key free); when held or queued, the
   * wait queues with the full script, with what is left of its timeout.
   * Only for waits of at least `commandTimeout` (or none), so the call
   * always answers before the wait's deadline.
   */
  private waitFirst(request: LockAcquireRequest, ttl: number, fences: number): Promise<LockGrant | null> {
    const { key, owner } = request;
    const started = now();
    return this.commands.script({
      operation: 'acquire',
      key,
      call: CALLS.try,
      input: { key, owner, ttl, fences },
      map: (reply): LockGrant | null | Promise<LockGrant | null> => {
        if (reply.status === 'granted') {
          if (!request.signal?.aborted) return { fencingToken: reply.token, fences };
          // Aborted while the call was on its way: the caller has gone, so the key goes back.
          this.waiters.cleanUp(key, owner);
          return null;
        }
        this.markContended(key);
        const next = rest(request, started);
        return next && this.queue(next, ttl, fences);
      },
      onError: () => this.waiters.cleanUp(key, owner),
    });
  }

  /** Remembers `key` as contended: this provider's next plain waits on it queue at once. */
  private markContended(key: string): void {
    if (this.contended.size >= MAX_CONTENDED_KEYS) this.contended.clear();
    this.contended.add(key);
  }

  /**
   * A try by the three-key script; when waiters are queued, the full acquire
   * script (mode 0) decides, so that a free key goes to the head of the queue.
   */
  private tryOnce(key: string, owner: string, ttl: number): Promise<LockGrant | null> {
    return this.commands.script({
      operation: 'acquire',
      key,
      call: CALLS.try,
      input: { key, owner, ttl },
      map: (reply) => {
        if (reply.status === 'queued')
          return this.waiters.attempt({ key, owner, ttl, fences: 1, kind: undefined }, '0', grantOf);
        return reply.status === 'granted' ? { fencingToken: reply.token } : null;
      },
      onError: () => this.waiters.cleanUp(key, owner),
    });
  }

  /**
   * {@inheritDoc LockProvider.extendMany}
   * One owner-checked script for all the locks on a standalone Redis; on a
   * Cluster one per slot, sent as one pipeline per master (places in a group: each by its own script).
   */
  extendMany(locks: readonly LockExtension[]): Promise<boolean[]> {
    return this.renewal.extendMany(locks);
  }

  /** {@inheritDoc LockProvider.acquireMany} One script on a standalone Redis; on a Cluster one per slot, in order. */
  acquireMany(requests: readonly LockBatchRequest[]): Promise<LockGrant[] | null> {
    return this.eviction.before(() => this.multi.acquireMany(requests));
  }
}
