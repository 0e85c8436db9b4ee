import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { LockLogger } from '../../contract/lock-logger.interface.js';

/**
 * A node-redis client (`redis` v5+ / `@redis/client`: `createClient()`),
 * described by the members the store relies on, so that these types need no
 * node-redis. Connected or not: a client not opened yet is opened by the
 * first call, and left open by `close()`.
 */
export interface NodeRedisClient {
  /** The socket is open (connected or reconnecting). */
  readonly isOpen: boolean;
  /** Ready for commands. */
  readonly isReady: boolean;
  /** Opens the client (the store does, on its first call, if you did not). */
  connect(): Promise<unknown>;
  /** Sends a command (the store sends every command through it). */
  sendCommand(...args: never[]): Promise<unknown>;
  /** A new client like this one (the store's subscriber connection). */
  duplicate(...args: never[]): unknown;
}

/** A node-redis Cluster client (`createCluster()`), described by the members the store relies on. */
export interface NodeRedisCluster {
  /** The cluster client is open. */
  readonly isOpen: boolean;
  /** Opens the cluster client (the store does, on its first call, if you did not). */
  connect(): Promise<unknown>;
  /** Sends a command to the master of its first key. */
  sendCommand(...args: never[]): Promise<unknown>;
  /** The client of one node (inspection and the eviction check ask every master). */
  nodeClient(...args: never[]): Promise<unknown>;
  /** A new cluster client like this one (the store's subscriber). */
  duplicate(...args: never[]): unknown;
}

/**
 * A node-redis Sentinel client (`createSentinel({ name, sentinelRootNodes })`),
 * described by the members the store relies on. Commands go to the master the
 * Sentinels name; pub/sub goes through its own subscriber connection, which
 * follows a failover.
 */
export interface NodeRedisSentinel {
  /** The Sentinel client is open. */
  readonly isOpen: boolean;
  /** Ready for commands. */
  readonly isReady: boolean;
  /** Opens the client (the store does, on its first call, if you did not). */
  connect(): Promise<unknown>;
  /** Sends a command to the master. */
  sendCommand(...args: never[]): Promise<unknown>;
  /** The master the Sentinels name (for messages). */
  getMasterNode(...args: never[]): unknown;
  /** Subscribes on its pub/sub connection (the store's wake-ups). */
  subscribe(...args: never[]): Promise<unknown>;
}

/**
 * An iovalkey `Redis` or `Cluster` client (the Valkey fork of ioredis, same
 * API; an ioredis client fits too), described by the members the store
 * relies on, so that these types need no iovalkey.
 */
export interface IovalkeyClient {
  /** The connection's state (`'ready'`, `'wait'` with `lazyConnect`, `'end'`, …). */
  readonly status: string;
  /** Runs a script by SHA (the lock scripts). */
  evalsha(...args: never[]): Promise<unknown>;
  /** A new client like this one (the store's subscriber connection). */
  duplicate(...args: never[]): unknown;
  /** Commands sent together (inspection, batched renewal on a Cluster). */
  pipeline(...args: never[]): unknown;
}

/** A client the store takes: ioredis or iovalkey `Redis` / `Cluster`, or node-redis `createClient()` / `createCluster()` / `createSentinel()`. */
export type RedisClient = Redis | Cluster | IovalkeyClient | NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;

/**
 * What to connect to: a `redis://` / `rediss://` URL or a plain object of
 * ioredis options (the provider opens an ioredis connection, and closes it),
 * or a client of yours ({@link RedisClient}: ioredis, iovalkey, node-redis),
 * which `close()` leaves open. Any other object (a node-redis pool, a class
 * instance) is refused with `LockOptionsError`.
 */
export type RedisConnection = string | RedisOptions | RedisClient;

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
   * died can hold up the queue. Default `max(5000, 3 × commandTimeout)`, at most `MAX_DURATION_MS`.
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
  /**
   * What to do about a Redis that may evict lock keys: its
   * `maxmemory-policy` is read (`INFO memory`) at connect, after every
   * reconnect and on `ping` (on every master of a Cluster), and anything but
   * `noeviction` lets Redis drop a held lock's key once memory is full (lock
   * keys carry expiries, so `volatile-*` policies evict them too), after
   * which the lock is granted again while its holder still runs.
   *
   * `'warn'` (default): one warning per server and policy through `logger`,
   * and {@link LockProvider.setupCheck} (the health indicator) reports it.
   * `'fail'`: also every acquire (and `ping`) fails with
   * {@link LockStoreError} until the policy is `noeviction`, so the
   * module's boot stops. `false`: no check (for a Redis that refuses `INFO`
   * to this user and that you know does not evict).
   */
  evictionCheck?: 'warn' | 'fail' | false;
  /**
   * Where the provider logs what it finds wrong with the Redis (see
   * `evictionCheck`): Nest's `Logger`, or `console`. The module passes a
   * Nest `Logger('RedisLockProvider')` to the store it builds from `redis`.
   * Default: none (nothing logged).
   */
  logger?: LockLogger;
}
