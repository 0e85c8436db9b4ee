import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import {
  endpointOf,
  noAnswerDetail,
  optionMessage,
  peerMissingMessage,
  providerClosedDetail,
  providerOptionsMessage,
  redisCause,
  redisConnectionTypeMessage,
} from '../../errors/lock.messages.js';
import { assertRedisConnection } from '../connection-options.validation.js';
import { LockProvider, lockHolder, type LockAcquireRequest, type LockGrant, type LockHolder } from '../../contract/lock-provider.js';
import { TimedList, TimedNode } from '../../shared/timer.js';
import { newOwnerToken } from '../../shared/owner-token.js';
import { SCRIPTS, lockKeys, lockTag, type LockScript } from './redis-lock.scripts.js';
import { loadOptionalPeer } from '../optional-peer.js';
import type { LockInspectPage, LockInspectRequest } from '../../contract/stored-lock.interface.js';
import { inspectRedis } from './redis-inspection.js';
import { now } from '../../shared/clock.js';
import { DEFAULT_COMMAND_TIMEOUT } from '../../contract/lock.constants.js';

/**
 * What to connect to: a `redis://` / `rediss://` URL, ioredis options, or an
 * existing ioredis `Redis` or `Cluster` client. A client you pass in is left
 * open by `close()`; a connection the provider opened is closed.
 */
export type RedisConnection = string | RedisOptions | Redis | Cluster;

/** Options of {@link RedisLockProvider}. */
export interface RedisLockProviderOptions {
  /** The Redis to keep locks in. */
  redis: RedisConnection;
  /**
   * Upper bound in ms on every Redis call (acquire, release, extend, ping),
   * also while the client reconnects; past it the call fails with
   * {@link LockStoreError}. Default `2000`.
   */
  commandTimeout?: number;
  /**
   * Prefix of the pub/sub channels on which hand-offs are announced: each
   * provider listens on `<channel>:<its instance id>`, so a release wakes only
   * the process whose waiter got the lock. Default `'nest-lock:grants'`.
   */
  channel?: string;
  /**
   * How long, in ms, a waiter's place in the queue lasts unless its process
   * refreshes it (it does every third of this), and how long a hand-off lasts
   * before the waiter renews it. It bounds how long a waiter whose process
   * died can hold up the queue. Default `max(5000, 3 × commandTimeout)`.
   */
  waiterLease?: number;
  /**
   * A grant is answered only once this many replicas of the master have it:
   * after the grant (or, for a waiter handed the lock, after an owner-checked
   * extend of it) the provider sends `WAIT <n>` on its connection, bounded by
   * `commandTimeout`. When fewer replicas acknowledge in time, the lock is
   * given back and the call fails with {@link LockStoreError}.
   *
   * Why: fencing tokens are raised to the server clock on every grant, which
   * keeps them growing across a failover as long as the promoted replica's
   * clock is not behind the old master's by more than the failover took. A
   * team that cannot rely on that makes sure that whichever replica is
   * promoted has every grant: set this to the number of replicas (or to the
   * number your failover may choose among).
   *
   * Cost: one more round trip per grant, plus the time replicas take to
   * acknowledge, during which this connection serves no other call (`WAIT`
   * blocks it); while a replica is down, every grant fails after
   * `commandTimeout`. Standalone or Sentinel only (not a Cluster client).
   * Default `0`: off.
   */
  waitForReplicas?: number;
}


type Client = Redis | Cluster;

/** What the lock scripts answer: a status and a number, then maybe a hand-off's owner (and token). */
type ScriptReply = Array<number | string>;


interface Waiter {
  readonly key: string;
  readonly owner: string;
  readonly ttl: number;
  /** Fencing tokens its grant reserves. */
  readonly fences: number;
  readonly resolve: (grant: LockGrant | null) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  /** The script call in flight for this waiter, if any. */
  inflight?: Promise<unknown>;
  /** A grant notice arrived while a call was in flight: check again after it. */
  again: boolean;
  /** The next call is the first (queueing) one: a grant from it is not a hand-off. */
  first: boolean;
  /**
   * The send time of the latest call that Redis answered "not yet" (or of the
   * first call): no later than any hand-off to this waiter, so a hand-off's
   * lease is counted from it.
   */
  safeStart?: number;
  timer?: ReturnType<typeof setTimeout>;
  deadline?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/**
 * A Redis call in flight, a member of the provider's {@link TimedList} until
 * it settles: the process's one lock timer bounds every call (instead of a
 * timer per call: every lock operation is one or two calls).
 */
class PendingCall extends TimedNode {
  constructor(private readonly expire: () => void) {
    super();
  }
  onTimer(): void {
    this.expire();
  }
}

/** Bound of {@link RedisLockProvider}'s memory of contended keys (past it, it starts over). */
const MAX_CONTENDED_KEYS = 1_024;
/** Calls held back by {@link RedisLockProvider}'s cork after which they leave, without waiting for the end of the turn. */
const CORK_FLUSH_CALLS = 16;
const noop = (): void => {};

/** `request` with what is left of its wait since `started`; `null` when it was aborted or its time is up. */
function rest(request: LockAcquireRequest, started: number): LockAcquireRequest | null {
  if (request.signal?.aborted) return null;
  if (request.waitTimeout === undefined) return request;
  const left = request.waitTimeout - (now() - started);
  return left > 0 ? { ...request, waitTimeout: left } : null;
}
const isOne = (reply: unknown): boolean => Number(reply) === 1;

/** The socket of a standalone client, whose writes can be held back and sent together; `undefined` for a Cluster. */
function corkable(client: Client): { cork(): void; uncork(): void } | undefined {
  const stream = (client as { stream?: { cork?: () => void; uncork?: () => void } }).stream;
  if (isCluster(client) || stream === undefined || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function') return undefined;
  return stream as { cork(): void; uncork(): void };
}

/** An ioredis client, also from another copy of ioredis than the one this library resolves. */
function isClient(value: unknown): value is Client {
  const v = value as Partial<Redis> | null;
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof v.evalsha === 'function' &&
    typeof v.duplicate === 'function' &&
    typeof v.status === 'string'
  );
}

function isCluster(client: Client): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** Where a call failed, for error messages: the key and the step. */
function where(key: string | undefined, step: string | undefined): string {
  return `${key === undefined ? '' : ` (key "${key}")`}${step === undefined ? '' : `, ${step}`}`;
}

/** Where the client connects, for messages: `host:port` (a socket path; a Cluster's first nodes), never a password. */
function endpoint(client: Client): string {
  if (isCluster(client)) {
    const nodes = (client as unknown as { startupNodes?: Array<string | number | { host?: string; port?: number }> }).startupNodes ?? [];
    const named = nodes.slice(0, 3).map((n) => (typeof n === 'object' ? endpointOf(n.host ?? '127.0.0.1', n.port ?? 6379) : String(n)));
    return `${named.join(', ')}${nodes.length > 3 ? ', ...' : ''} (Cluster)`;
  }
  const o = (client as { options?: { host?: string; port?: number; path?: string | null } }).options ?? {};
  return o.path ? o.path : endpointOf(o.host, o.port);
}

/** A client error that no reconnect cures: the server rejected the configured database index. */
const isDbRejected = (err: unknown): boolean => err instanceof Error && /DB index is out of range/i.test(err.message);

/** An error of a command that only says the connection is down: the last connection error says why. */
const isNotConnected = (err: unknown): boolean =>
  err instanceof Error && /Stream isn't writeable|Connection is closed|max retries per request/i.test(err.message);

/**
 * Locks in Redis (standalone or Cluster), shared by every instance that uses
 * the same Redis.
 *
 * - Acquire is one round trip: a Lua script that sets the key to the owner
 *   token with a lease and returns a fencing token from a per-key counter
 *   (a block of `request.fences` tokens: the engine hands the lock to other
 *   callers of this process with the rest, see `localHandOff`), raised to
 *   the server clock in microseconds whenever it is behind, so that tokens
 *   keep growing across a failover to a replica with an older counter (see
 *   `waitForReplicas` for a guarantee without clocks). A wait
 *   starts with the small script a try uses (three keys, an integer reply);
 *   only when that finds the key held does it queue with the full one, and
 *   the provider then remembers the key as contended, so that its next
 *   waits queue at once (until one is granted at once again).
 *   Release and extend are owner-checked scripts. Scripts run by `EVALSHA`,
 *   with `EVAL` when the server's script cache was flushed.
 * - Waiters queue in Redis (FIFO across instances). Release grants the key
 *   to the first live waiter inside the same script and draws its fencing
 *   token. A waiter of another instance is told on that instance's own
 *   channel (one subscriber connection per provider), a waiter of this
 *   instance by the release's reply; either starts at once, and the engine
 *   renews the short hand-off lease to the full `ttl`. No polling: a waiter
 *   also re-checks when the holder's lease would end (a crashed holder
 *   publishes nothing), and refreshes its queue entry, which expires if its
 *   process dies.
 * - Every call is bounded by `commandTimeout`, also while ioredis reconnects,
 *   and fails with {@link LockStoreError}.
 *
 * Keys, for a lock key `k` (the module's prefix included): `{k}` (the lock),
 * `{k}:fence`, `{k}:q`, `{k}:w`, all in one Cluster slot.
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
  /** The client that runs the scripts (yours, or the one the provider opened). */
  readonly client: Client;
  private readonly ownsClient: boolean;
  private readonly commandTimeout: number;
  /** Replicas that must have a grant before it is answered (0: none). */
  private readonly waitForReplicas: number;
  /** Prefix of every instance's hand-off channel. */
  private readonly channel: string;
  /** This provider's id in queue entries: hand-offs to its waiters are announced on `<channel>:<instance>`. */
  private readonly instance = newOwnerToken().slice(0, 16);
  private readonly inbox: string;
  /** The scripts' last argument: `<waiter lease> <instance> <channel prefix>` (one argument: each costs every call). */
  private readonly common: string;
  /** The calls in flight, each due at its deadline. */
  private readonly inflight = new TimedList();
  /** How long a waiter's queue entry, and a hand-off it has not renewed yet, lives without a refresh. */
  private readonly waiterLease: number;
  private subscriber: Client | undefined;
  private subscribed: Promise<unknown> | true | undefined;
  private readonly waiters = new Map<string, Waiter>();
  /** Owners granted after queueing: their release goes straight to the full script (the queue is likely not empty). */
  private readonly afterWait = new Set<string>();
  /**
   * Keys a wait of this provider lately found held or queued: their next wait
   * queues at once (the full script), instead of trying the small script first.
   */
  private readonly contended = new Set<string>();
  /** The client whose socket writes are held back: to the end of this event-loop turn ({@link cork}), or of a {@link coalesce}. */
  private corked: Client | undefined;
  /** The socket {@link cork} holds back, and how many calls it holds. */
  private corkedStream: { cork(): void; uncork(): void } | undefined;
  private corkedCalls = 0;
  /** Inside {@link coalesce}: its calls stay together. */
  private coalescing = false;
  private readonly background = new Set<Promise<unknown>>();
  private readonly ready = new WeakMap<Client, Promise<void>>();
  /** Per client, the last connection error it reported (cleared when it is ready again): the cause in messages. */
  private readonly lastErrors = new WeakMap<Client, unknown>();
  /** The server rejected the configured database index: calls fail with it (they would run on another database). */
  private dbRejected: unknown;
  private closed = false;

  constructor(options: RedisLockProviderOptions) {
    super();
    if (options === null || typeof options !== 'object') {
      throw new LockOptionsError(providerOptionsMessage('RedisLockProvider', '{ redis: "redis://127.0.0.1:6379" }'));
    }
    const { redis, commandTimeout = DEFAULT_COMMAND_TIMEOUT, channel = 'nest-lock:grants' } = options;
    const waiterLease = options.waiterLease ?? Math.max(5_000, 3 * commandTimeout);
    for (const [name, value] of [['commandTimeout', commandTimeout], ['waiterLease', waiterLease]] as const) {
      if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
        throw new LockOptionsError(optionMessage('RedisLockProvider', name, 'a finite number of milliseconds > 0', value));
      }
    }
    if (typeof channel !== 'string' || channel.length === 0) {
      throw new LockOptionsError(optionMessage('RedisLockProvider', 'channel', 'a non-empty string', channel));
    }
    assertRedisConnection(redis, 'RedisLockProvider');
    const { waitForReplicas = 0 } = options;
    if (!(typeof waitForReplicas === 'number' && Number.isInteger(waitForReplicas) && waitForReplicas >= 0)) {
      throw new LockOptionsError(`RedisLockProvider: waitForReplicas must be a whole number of replicas >= 0, got ${String(waitForReplicas)}.`);
    }
    this.waitForReplicas = waitForReplicas;
    this.commandTimeout = commandTimeout;
    this.channel = channel;
    this.inbox = `${channel}:${this.instance}`;
    this.waiterLease = Math.ceil(waiterLease);
    this.common = `${this.waiterLease} ${this.instance} ${channel}`;
    if (isClient(redis)) {
      this.client = redis;
      this.ownsClient = false;
    } else if (typeof redis === 'string' || (redis !== null && typeof redis === 'object' && !Array.isArray(redis))) {
      // Our own connection: fail fast instead of queueing while disconnected, and never
      // replay a command after a reconnect (the caller has long been told it failed).
      const own: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false };
      // A connection that cannot complete (a TLS mismatch, a black-holed port) fails a little before a call's
      // bound ends, so that the call names the cause (unless you set connectTimeout yourself).
      const connectTimeout = Math.max(1, Math.floor(commandTimeout * 0.9));
      const { Redis } = loadOptionalPeer<typeof import('ioredis')>('ioredis', 'RedisLockProvider');
      this.client =
        typeof redis === 'string' ? new Redis(redis, { connectTimeout, ...own }) : new Redis({ connectTimeout, ...(redis as RedisOptions), ...own });
      this.ownsClient = true;
    } else {
      throw new LockOptionsError(redisConnectionTypeMessage(redis));
    }
    if (waitForReplicas > 0 && isCluster(this.client)) {
      throw new LockOptionsError(
        'RedisLockProvider: waitForReplicas works with a standalone or Sentinel-managed Redis, not a Cluster client (WAIT must reach the master of each key).',
      );
    }
    this.watchErrors(this.client); // reported through the calls that fail, with this cause
  }

  /**
   * The cause of the latest connection failure, in words ("Redis at
   * 127.0.0.1:6380 refused the connection (ECONNREFUSED)"), or `undefined`
   * while connected without trouble. Never holds the password.
   */
  lastFailure(): string | undefined {
    const err = this.dbRejected ?? this.lastErrors.get(this.client);
    return err === undefined ? undefined : this.causeOf(this.client, err);
  }

  /** Remembers each client's last connection error (what `call` reports); forgets it once the client is ready. */
  private watchErrors(client: Client): void {
    client.on('error', (err: unknown) => {
      if (client === this.client && isDbRejected(err)) this.dbRejected = err;
      else this.lastErrors.set(client, err);
    });
    client.on('ready', () => this.lastErrors.delete(client));
  }

  /** {@inheritDoc LockProvider.acquire} */
  acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const granted = this.take(request);
    return this.waitForReplicas === 0 ? granted : granted.then((grant) => grant && this.replicated(request, grant));
  }

  /** {@link acquire}, before replicas are asked. */
  private take(request: LockAcquireRequest): Promise<LockGrant | null> {
    const ttl = Math.max(1, Math.ceil(request.ttl));
    const fences = request.fences !== undefined && request.fences > 1 ? Math.floor(request.fences) : 1;
    if (!request.wait || request.signal?.aborted || request.waitTimeout === 0) {
      const map = fences === 1 ? this.toGrant : (reply: ScriptReply) => this.toBlockGrant(reply, fences);
      if (fences > 1) return this.attempt(request.key, request.owner, ttl, '0', fences, map);
      return this.tryOnce(request.key, request.owner, ttl, map);
    }
    // (a wait shorter than a call's bound queues at once: its timer, not the call, decides when it ends)
    const short = request.waitTimeout !== undefined && request.waitTimeout < this.commandTimeout;
    if (!short && !this.contended.has(request.key)) return this.waitFirst(request, ttl, fences);
    return this.queue(request, ttl, fences);
  }

  /**
   * With `waitForReplicas`: answers `grant` once that many replicas have it.
   * `WAIT` counts the writes of this connection, so the grant must be one of
   * them: a grant by this call's own script is; a hand-off (written by the
   * release of another connection) is followed by an owner-checked extend
   * first, in the same write. Fewer replicas in time: the lock goes back.
   */
  private replicated(request: LockAcquireRequest, grant: LockGrant): Promise<LockGrant> {
    const { key, owner } = request;
    const need = this.waitForReplicas;
    // A little under the call's bound, so that Redis answers with the count before the call gives up.
    const waitMs = Math.max(1, Math.floor(this.commandTimeout * 0.8));
    const tag = lockTag(key);
    const ttl = Math.max(1, Math.ceil(request.ttl));
    const giveBack = (): void => {
      this.afterWait.delete(owner);
      this.cleanUp(key, owner);
    };
    const send =
      (extend: (c: Client) => Promise<unknown>) =>
      (c: Client): Promise<[unknown, number]> =>
        Promise.all([grant.queued ? extend(c) : 1, c.wait(need, waitMs)]);
    return this.call(
      'acquire',
      key,
      send((c) => c.evalsha(SCRIPTS.extend.sha, 1, tag, owner, ttl)),
      ([held, acked]) => {
        if (Number(held) === 1 && acked >= need) return grant;
        const error = new LockStoreError(
          'acquire',
          Number(held) !== 1
            ? `the lock handed to this waiter was gone from Redis before replicas confirmed it (key "${key}")`
            : `only ${acked} of ${need} replicas acknowledged the grant within ${waitMs} ms (waitForReplicas); the lock was given back (key "${key}")`,
        );
        // Given back before the call fails, so that nobody finds it held afterwards. (a promise here is adopted by the call's own)
        this.afterWait.delete(owner);
        return this.leave(key, owner).then(() => {
          throw error;
        }) as unknown as LockGrant;
      },
      send((c) => c.eval(SCRIPTS.extend.source, 1, tag, owner, ttl)),
      giveBack,
    );
  }

  /** {@inheritDoc LockProvider.extend} */
  extend(key: string, owner: string, ttl: number): Promise<boolean> {
    return this.runSmall('extend', key, SCRIPTS.extend, 1, [lockTag(key), owner, Math.max(1, Math.ceil(ttl))], isOne);
  }

  /**
   * {@inheritDoc LockProvider.release}
   * A lock granted without queueing is released by a two-key script; only
   * when that finds waiters (or the grant came after a wait) does the full
   * release with hand-off run.
   */
  release(key: string, owner: string): Promise<boolean> {
    if (this.afterWait.delete(owner)) return this.run('release', key, SCRIPTS.release, [owner], this.released);
    const tag = lockTag(key);
    return this.runSmall('release', key, SCRIPTS.releaseFree, 2, [tag, `${tag}:q`, owner], (reply) => {
      const status = Number(reply);
      // (a promise here is adopted by the call's own)
      return (status === 2 ? this.run('release', key, SCRIPTS.release, [owner], this.released) : status === 1) as boolean;
    });
  }

  /**
   * {@inheritDoc LockProvider.coalesce}
   * The calls leave in one socket write (a standalone client; a Cluster
   * client sends them as it would anyway).
   */
  coalesce<T>(send: () => T): T {
    const client = this.client;
    if (this.coalescing || client.status !== 'ready') return send();
    // Held back already (calls in flight): the turn's writes leave together; only no flush in between.
    const stream = client === this.corked ? undefined : corkable(client);
    if (stream) {
      stream.cork();
      this.corked = client;
    }
    this.coalescing = true;
    try {
      return send();
    } finally {
      this.coalescing = false;
      if (stream) {
        this.corked = undefined;
        stream.uncork();
      }
    }
  }

  /** {@inheritDoc LockProvider.holder} One small script (GET and PTTL of the lock key). */
  holder(key: string): Promise<LockHolder | null> {
    return this.runSmall('holder', key, SCRIPTS.holder, 1, [lockTag(key)], (reply) => {
      if (!Array.isArray(reply)) return null;
      return lockHolder(String(reply[0]), Number(reply[1]));
    });
  }

  /** {@inheritDoc LockProvider.inspect} SCAN on every master; holders' grant times are not recorded in Redis. */
  inspect(request: LockInspectRequest): Promise<LockInspectPage> {
    return inspectRedis(this.client, (client, send) => this.call('inspect', undefined, (c) => send(c as typeof client), undefined, undefined, undefined, client), request);
  }

  /**
   * {@inheritDoc LockProvider.watchConnection}
   * The client's `close` (for a Cluster also a node that leaves): a Redis
   * restarted without persistence comes back empty.
   */
  watchConnection(onLost: () => void): () => void {
    const client = this.client;
    const lost = (): void => onLost();
    client.on('close', lost);
    if (isCluster(client)) client.on('-node', lost);
    return () => {
      client.off('close', lost);
      if (isCluster(client)) client.off('-node', lost);
    };
  }

  /** {@inheritDoc LockProvider.ping} */
  async ping(): Promise<number> {
    const started = now();
    await this.call('ping', undefined, (c) => c.ping());
    // (a rejected SELECT is answered before the PING that followed it on the same connection)
    if (this.dbRejected !== undefined) throw this.storeError('ping', this.client, this.dbRejected, '');
    return now() - started;
  }

  /** Resolves local waiters with `null` (they leave the queue), closes the subscriber connection, and quits the main connection if the provider opened it. A client you passed in stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of [...this.waiters.values()]) this.giveUp(waiter);
    this.afterWait.clear();
    await Promise.allSettled([...this.background]);
    const sub = this.subscriber;
    this.subscriber = undefined;
    await Promise.allSettled([sub && this.quit(sub), this.ownsClient ? this.quit(this.client) : undefined]);
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
    const tag = lockTag(key);
    const started = now();
    return this.runSmall(
      'acquire',
      key,
      SCRIPTS.try,
      3,
      [tag, `${tag}:fence`, `${tag}:q`, owner, ttl, fences],
      (reply): LockGrant | null => {
        const token = Number(reply);
        if (token > 0) {
          if (!request.signal?.aborted) return { fencingToken: token, fences };
          // Aborted while the call was on its way: the caller has gone, so the key goes back.
          this.cleanUp(key, owner);
          return null;
        }
        if (this.contended.size >= MAX_CONTENDED_KEYS) this.contended.clear();
        this.contended.add(key);
        const next = rest(request, started);
        // (a promise here is adopted by the call's own)
        return next && (this.queue(next, ttl, fences) as unknown as LockGrant | null);
      },
      () => this.cleanUp(key, owner),
    );
  }

  /**
   * Subscribes (once per provider), then queues and waits. Time spent
   * subscribing counts against the wait's timeout, and an abort meanwhile
   * ends it.
   */
  private queue(request: LockAcquireRequest, ttl: number, fences: number): Promise<LockGrant | null> {
    const subscribed = this.subscribe(request.key);
    if (subscribed === true) return this.wait(request, ttl, fences);
    const started = now();
    return subscribed.then(() => {
      const next = rest(request, started);
      return next && this.wait(next, ttl, fences);
    });
  }

  /**
   * Queues and waits until granted (by notice or by re-check), timed out,
   * aborted, or closed. The waiter is registered before the first call, so a
   * notice that overtakes that call's reply is not lost.
   */
  private wait(request: LockAcquireRequest, ttl: number, fences: number): Promise<LockGrant | null> {
    return new Promise<LockGrant | null>((resolve, reject) => {
      const waiter: Waiter = { key: request.key, owner: request.owner, ttl, fences, resolve, reject, settled: false, again: false, first: true };
      this.waiters.set(waiter.owner, waiter);
      if (request.waitTimeout !== undefined) {
        waiter.deadline = setTimeout(() => this.giveUp(waiter), request.waitTimeout);
      }
      if (request.signal) {
        waiter.signal = request.signal;
        waiter.onAbort = () => this.giveUp(waiter);
        request.signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.check(waiter);
    });
  }

  /**
   * A try by the three-key script; when waiters are queued, the full acquire
   * script (mode 0) decides, so that a free key goes to the head of the queue.
   */
  private tryOnce(key: string, owner: string, ttl: number, map: (reply: ScriptReply) => LockGrant | null): Promise<LockGrant | null> {
    const tag = lockTag(key);
    return this.runSmall(
      'acquire',
      key,
      SCRIPTS.try,
      3,
      [tag, `${tag}:fence`, `${tag}:q`, owner, ttl],
      (reply) => {
        const token = Number(reply);
        // (a promise here is adopted by the call's own)
        if (token < 0) return this.attempt(key, owner, ttl, '0', 1, map) as unknown as LockGrant | null;
        return token > 0 ? { fencingToken: token } : null;
      },
      () => this.cleanUp(key, owner),
    );
  }

  /** A script with fewer keys than the four of {@link run}: `numKeys` keys first in `args`; EVAL on NOSCRIPT. */
  private runSmall<R>(
    operation: string,
    key: string,
    script: LockScript,
    numKeys: number,
    args: Array<string | number>,
    map: (reply: unknown) => R,
    onError?: () => void,
  ): Promise<R> {
    return this.call(operation, key, (c) => c.evalsha(script.sha, numKeys, ...args), map, (c) => c.eval(script.source, numKeys, ...args), onError);
  }

  /** One acquire script call; on failure, makes sure the call leaves nothing behind if it still reaches Redis. */
  private attempt<R>(key: string, owner: string, ttl: number, mode: '0' | '1' | '2', fences: number, map: (reply: ScriptReply) => R): Promise<R> {
    return this.run('acquire', key, SCRIPTS.acquire, [owner, ttl, mode, fences], map, () => this.cleanUp(key, owner));
  }

  /** An acquire reply as a grant (`{1, token}`) or `null`; wakes a local waiter the call handed the key to. */
  private readonly toGrant = (reply: ScriptReply): LockGrant | null => {
    this.handedOff(reply, 2);
    return reply[0] === 1 ? { fencingToken: Number(reply[1]) } : null;
  };

  /** {@link toGrant} for a grant that reserved a block of fencing tokens. */
  private toBlockGrant(reply: ScriptReply, fences: number): LockGrant | null {
    this.handedOff(reply, 2);
    return reply[0] === 1 ? { fencingToken: Number(reply[1]), fences } : null;
  }

  /** An acquire reply, after waking a local waiter the call handed the key to. */
  private readonly acquired = (reply: ScriptReply): ScriptReply => {
    this.handedOff(reply, 2);
    return reply;
  };

  /** A release reply: whether the owner held the key; wakes a local waiter it was handed to. */
  private readonly released = (reply: ScriptReply): boolean => {
    this.handedOff(reply, 1);
    return reply[0] === 1;
  };

  /**
   * A script's reply may end with a hand-off of the key to the head of the
   * queue (`owner`, and `token` when that waiter is this provider's own: no
   * PUBLISH was sent for it). Wakes that local waiter.
   */
  private handedOff(reply: ScriptReply, at: number): void {
    if (reply.length < at + 2) return;
    const waiter = this.waiters.get(String(reply[at]));
    if (waiter) this.granted(waiter, Number(reply[at + 1]));
  }

  /** Next re-check: when the holder's lease would end, and at least every third of the waiter lease. */
  private schedule(waiter: Waiter, holderTtl: number): void {
    if (waiter.settled) return;
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    const refresh = this.waiterLease / 3;
    const delay = holderTtl >= 0 ? Math.min(holderTtl + 2, refresh) : refresh;
    waiter.timer = setTimeout(() => this.check(waiter), delay);
  }

  /** Asks Redis whether the waiter holds the key now (confirming a hand-off), and refreshes its entry. */
  private check(waiter: Waiter): void {
    if (waiter.settled) return;
    if (waiter.inflight) {
      waiter.again = true;
      return;
    }
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    waiter.timer = undefined;
    const sent = now();
    const queued = !waiter.first;
    waiter.first = false;
    waiter.safeStart ??= sent;
    const call = this.attempt(waiter.key, waiter.owner, waiter.ttl, queued ? '2' : '1', waiter.fences, this.acquired);
    waiter.inflight = call;
    call.then(
      (reply) => {
        waiter.inflight = undefined;
        if (waiter.settled) return; // gave up meanwhile: giveUp() leaves the queue or passes the key on
        if (reply[0] === 1) {
          this.settle(waiter);
          if (queued) this.afterWait.add(waiter.owner);
          else this.contended.delete(waiter.key);
          const fencingToken = Number(reply[1]);
          waiter.resolve(queued ? { fencingToken, fences: waiter.fences, queued, leaseStartedAt: sent } : { fencingToken, fences: waiter.fences });
        } else {
          waiter.safeStart = sent;
          if (waiter.again) {
            waiter.again = false;
            this.check(waiter);
          } else {
            this.schedule(waiter, Number(reply[1]));
          }
        }
      },
      (err: unknown) => {
        waiter.inflight = undefined;
        if (waiter.settled) return;
        this.settle(waiter);
        waiter.reject(err);
      },
    );
  }

  /**
   * A hand-off notice: the release script already set the key to this
   * waiter's token (with a lease of `min(ttl, waiterLease)`) and drew its
   * fencing token, so the waiter starts at once. The engine renews that short
   * lease to the full `ttl` well before it ends.
   */
  private granted(waiter: Waiter, fencingToken: number): void {
    if (waiter.settled || waiter.safeStart === undefined) return;
    this.settle(waiter);
    this.afterWait.add(waiter.owner);
    waiter.resolve({
      fencingToken,
      fences: waiter.fences,
      queued: true,
      leaseStartedAt: waiter.safeStart,
      leaseMs: Math.min(waiter.ttl, this.waiterLease),
    });
  }

  /**
   * Timeout, abort or close: sends the leave (passing the key on if it was
   * granted meanwhile) before it resolves `null`. Calls on one connection run
   * in the order they were written, so every later call of this provider
   * finds the waiter gone. A call still in flight for the waiter may have
   * been sent again after the leave (EVAL after NOSCRIPT): the waiter leaves
   * once more after it.
   */
  private giveUp(waiter: Waiter): void {
    if (waiter.settled) return;
    this.settle(waiter);
    const left = this.leave(waiter.key, waiter.owner);
    const inflight = waiter.inflight;
    this.track(inflight ? Promise.all([left, inflight.catch(noop)]).then(() => this.leave(waiter.key, waiter.owner)) : left);
    waiter.resolve(null);
  }

  private settle(waiter: Waiter): void {
    waiter.settled = true;
    this.waiters.delete(waiter.owner);
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    if (waiter.deadline !== undefined) clearTimeout(waiter.deadline);
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
  }

  /** After a failed acquire: leave the queue, release if granted. Best effort (the lease and the entry expire anyway). */
  private cleanUp(key: string, owner: string): void {
    if (this.closed) return;
    this.track(this.leave(key, owner));
  }

  /** Leaves the queue (passing the key on if it was granted meanwhile). Best effort: never rejects. */
  private leave(key: string, owner: string): Promise<void> {
    return this.run('leave', key, SCRIPTS.leave, [owner], (reply) => this.handedOff(reply, 1)).catch(noop);
  }

  private track(promise: Promise<unknown>): void {
    this.background.add(promise);
    void promise.finally(() => this.background.delete(promise));
  }

  /** Opens the shared subscriber connection once; a waiter must be subscribed before it queues. `true` once subscribed. */
  private subscribe(key: string): Promise<unknown> | true {
    if (this.closed) return Promise.reject(new LockStoreError('acquire', `${providerClosedDetail('Redis')} (key "${key}")`));
    if (!this.subscribed) {
      if (!this.subscriber) {
        const sub = isCluster(this.client)
          ? this.client.duplicate()
          : this.client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true });
        this.watchErrors(sub);
        sub.on('message', (channel: string, message: string) => {
          if (channel !== this.inbox) return;
          const space = message.indexOf(' ');
          const waiter = this.waiters.get(space < 0 ? message : message.slice(0, space));
          if (!waiter) return;
          const token = space < 0 ? NaN : Number(message.slice(space + 1));
          if (Number.isSafeInteger(token)) this.granted(waiter, token);
          else this.check(waiter);
        });
        this.subscriber = sub;
      }
      const sub = this.subscriber;
      const attempt = this.call('acquire', key, (c) => c.subscribe(this.inbox), undefined, undefined, undefined, sub, 'subscribing to hand-off notices');
      this.subscribed = attempt;
      attempt.then(
        () => {
          if (this.subscribed === attempt) this.subscribed = true;
        },
        () => {
          if (this.subscribed === attempt) this.subscribed = undefined;
        },
      );
    }
    return this.subscribed;
  }

  /**
   * Runs a lock script with its four keys and the common arguments, bounded
   * by the command timeout: EVALSHA, and EVAL when the server's script cache
   * does not have it (NOSCRIPT).
   */
  private run<R>(
    operation: string,
    key: string,
    script: LockScript,
    args: [string, number, string, number] | [string],
    map: (reply: ScriptReply) => R,
    onError?: () => void,
  ): Promise<R> {
    const argv = [...lockKeys(key), ...args, this.common];
    return this.call(
      operation,
      key,
      (c) => c.evalsha(script.sha, 4, ...argv) as Promise<ScriptReply>,
      map,
      (c) => c.eval(script.source, 4, ...argv) as Promise<ScriptReply>,
      onError,
    );
  }

  /**
   * Runs `send` on the client once it is connected, within the command
   * timeout, and resolves `map` of its reply (inside the same promise: this is
   * the hot path of every lock operation). A NOSCRIPT error runs `resend`
   * instead. `onError` runs when the call fails. Waiting for the connection
   * counts against the timeout; a call that timed out while waiting is never sent.
   */
  private call<T, R = T>(
    operation: string,
    key: string | undefined,
    send: (client: Client) => Promise<T>,
    map?: (value: T) => R,
    resend?: (client: Client) => Promise<T>,
    onError?: () => void,
    client: Client = this.client,
    step?: string,
  ): Promise<R> {
    if (this.closed && operation !== 'leave') {
      return Promise.reject(new LockStoreError(operation, `${providerClosedDetail('Redis')}${where(key, step)}`));
    }
    if (this.dbRejected !== undefined && client === this.client) {
      return Promise.reject(this.storeError(operation, client, this.dbRejected, where(key, step)));
    }
    return new Promise<R>((resolve, reject) => {
      let done = false;
      const fail = (err: unknown): void => {
        if (done) return;
        done = true;
        this.inflight.remove(pending);
        onError?.();
        reject(err instanceof LockStoreError ? err : this.storeError(operation, client, err, where(key, step)));
      };
      const pending = new PendingCall(() => {
        const last = this.lastErrors.get(client);
        const cause = last === undefined ? undefined : this.causeOf(client, last);
        fail(new LockStoreError(operation, `${noAnswerDetail(`Redis at ${endpoint(client)}`, this.commandTimeout, cause)}${where(key, step)}`, { cause: last }));
      });
      const ok = (value: T): void => {
        if (done) return;
        done = true;
        this.inflight.remove(pending);
        if (!map) return resolve(value as unknown as R);
        try {
          resolve(map(value));
        } catch (err) {
          reject(err);
        }
      };
      const failed = (err: unknown): void => {
        if (resend && !done && err instanceof Error && err.message.startsWith('NOSCRIPT')) {
          const again = resend;
          resend = undefined;
          again(client).then(ok, failed);
          return;
        }
        fail(err ?? new Error('unknown error'));
      };
      this.inflight.schedule(pending, now() + this.commandTimeout);
      let work: Promise<T>;
      try {
        if (client.status === 'ready') {
          // A lone call leaves at once; holding writes back pays off from the second call in flight on.
          const held = client === this.corked;
          if (!held && this.inflight.size > 1) this.cork(client);
          work = send(client);
          if (held && ++this.corkedCalls >= CORK_FLUSH_CALLS && !this.coalescing) this.flush();
        } else {
          work = this.connected(client).then(() => {
            // Waiting for the connection counts against the timeout; a call that timed out is never sent.
            if (done) throw new LockStoreError(operation, 'timed out');
            return send(client);
          });
        }
      } catch (err) {
        failed(err);
        return;
      }
      work.then(ok, failed);
    });
  }

  /** A failed call as a {@link LockStoreError}: the cause in words (a lost connection: the last connection error), the error as `cause`. */
  private storeError(operation: string, client: Client, err: unknown, at: string): LockStoreError {
    const cause = isNotConnected(err) ? (this.lastErrors.get(client) ?? err) : err;
    return new LockStoreError(operation, `${this.causeOf(client, cause)}${at}`, { cause });
  }

  /** What a client error means, in words, for this client (its address, and whether it speaks TLS). */
  private causeOf(client: Client, err: unknown): string {
    const tls = !isCluster(client) && Boolean((client as { options?: { tls?: unknown } }).options?.tls);
    return redisCause(endpoint(client), err, tls);
  }

  /**
   * Holds back the socket writes of `client` until the end of this turn of
   * the event loop (setImmediate: after the I/O callbacks of this turn), so
   * that the calls of many callers, woken by one batch of replies or by
   * requests that arrived together, reach Redis in a few writes and reads: a
   * system call on each side is most of what a call costs. Every
   * {@link CORK_FLUSH_CALLS} calls the held writes leave, so Redis works on
   * them while this process prepares the next (one write at the end of the
   * turn would leave each side idle while the other works). Replies are not
   * held back. Only while another call is in flight: a lone call is written
   * at once (holding it back would cost it more than it saves).
   */
  private cork(client: Client): void {
    const stream = corkable(client);
    if (!stream) return;
    stream.cork();
    this.corked = client;
    this.corkedStream = stream;
    this.corkedCalls = 1;
    setImmediate(() => {
      this.corked = this.corkedStream = undefined;
      stream.uncork();
    });
  }

  /** Sends what {@link cork} held back so far; later calls of the turn are held back again. */
  private flush(): void {
    this.corkedCalls = 0;
    this.corkedStream?.uncork();
    this.corkedStream?.cork();
  }

  /** Resolves when `client` is ready; rejects at once when it was closed for good. */
  private connected(client: Client): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    if (client.status === 'end') return Promise.reject(new Error('the connection was closed'));
    let pending = this.ready.get(client);
    if (!pending) {
      if (client.status === 'wait') client.connect().catch(noop); // lazyConnect
      pending = new Promise<void>((resolve) => {
        client.once('ready', () => {
          this.ready.delete(client);
          resolve();
        });
      });
      this.ready.set(client, pending);
    }
    return pending;
  }

  /** QUIT (bounded), then disconnect; resolves when the connection has ended. */
  private async quit(client: Client): Promise<void> {
    if (client.status === 'end') return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.commandTimeout)));
    try {
      if (client.status === 'ready') await Promise.race([client.quit(), bound]);
    } catch {
      // disconnect below
    }
    if ((client.status as string) !== 'end') client.disconnect();
    await Promise.race([ended, bound]);
    clearTimeout(timer);
  }
}
