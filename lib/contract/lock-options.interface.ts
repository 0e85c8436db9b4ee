import type { LockProvider } from './lock-provider.js';
import type { LockEvent } from './lock-events.interface.js';
import type { LockTelemetryOptions } from '../telemetry/lock-telemetry-options.interface.js';
import type { RedisConnection } from '../stores/redis/index.js';
import type { PostgresConnection, PostgresLockProviderOptions } from '../stores/postgres/index.js';

/**
 * What happens when a lock is already held by another caller:
 * - `'throw'`: fail at once with {@link LockAcquireError} (default);
 * - `'skip'`: do not run the protected code; the call returns `undefined`;
 * - `'wait'`: queue (FIFO) until the lock is free, up to `waitTimeout` ms,
 *   then throw {@link LockAcquireError}.
 */
export type OnHeld = 'throw' | 'skip' | 'wait';

/** Per-call options, shared by `@Locked`, `LockService.withLock`, `acquire` and `tryAcquire`. */
export interface LockCallOptions {
  /** Lease length in ms. Renewed while the holder runs (see `renew`). Default: the module's `ttl` (30 000). */
  ttl?: number;
  /** Policy when the lock is held. Default: the module's `onHeld` (`'throw'`). */
  onHeld?: OnHeld;
  /** Longest wait in ms with `onHeld: 'wait'`. Default: the module's `waitTimeout` (unbounded). */
  waitTimeout?: number;
  /** Keep the lease alive while the holder runs, renewing every third of `ttl`. Default: the module's `renew` (`true`). */
  renew?: boolean;
  /** Upper bound in ms on how long renewal may keep the lock; after it the lock expires and the signal aborts. */
  maxHold?: number;
  /**
   * Keep the lock at least this many ms after it was taken, even if the work
   * finished sooner (ShedLock's `lockAtLeastFor`): on release, the lease is
   * shortened to the remaining minimum instead of deleted.
   */
  holdAtLeast?: number;
  /** Let a nested call for the same name run under the outer lock instead of failing with {@link LockReentryError}. Default `false`. */
  reentrant?: boolean;
  /**
   * Scheduled tasks only: when the store fails, run the tick anyway (`true`)
   * or skip it (`false`, default). See the README's "Scheduled tasks".
   */
  failOpen?: boolean;
  /** Aborts a wait for the lock (the call then throws the signal's reason). */
  signal?: AbortSignal;
  /**
   * A short, low-cardinality name for this kind of lock, used by metrics,
   * traces and events instead of the lock name (which may carry ids, such as
   * `account:42`). Default with `@Locked`: the static name, or
   * `ClassName.methodName` when the name is a function; otherwise none.
   */
  label?: string;
}

/**
 * Options of `LockModule.forRoot()` / `forRootAsync()`.
 *
 * @example
 * ```ts
 * LockModule.forRoot({ ttl: 60_000, onHeld: 'wait', waitTimeout: 5_000 })
 * ```
 */
export interface LockModuleOptions {
  /**
   * The store. Default: a new {@link InMemoryLockProvider} (one process only).
   * `Test.createTestingModule(...).overrideProvider(LockProvider)` replaces it too.
   */
  provider?: LockProvider;
  /**
   * Keep locks in Redis, shared by every instance on the same Redis: a URL
   * (`'redis://:password@host:6379/0'`), ioredis options, or an existing
   * ioredis `Redis` or `Cluster` client. A connection built from a URL or
   * options is closed on application shutdown; a client you pass in is left
   * open. Needs the `ioredis` package (an optional peer dependency).
   *
   * @example
   * ```ts
   * LockModule.forRoot({ redis: process.env.REDIS_URL, commandTimeout: 1_000 })
   * LockModule.forRoot({ redis: new Cluster([{ host: 'redis-0', port: 6379 }]) })
   * ```
   */
  redis?: RedisConnection;
  /**
   * Keep locks in PostgreSQL (one row per lock): a connection string, a
   * `pg.PoolConfig`, a `pg.Pool` the app already has (left open on shutdown),
   * or full {@link PostgresLockProviderOptions} (`{ connection, tableName, createTable, prepareStatements }`).
   * Needs the optional peer dependency `pg`. The module builds a
   * `PostgresLockProvider` and closes it on shutdown.
   *
   * @example
   * ```ts
   * LockModule.forRoot({ postgres: process.env.DATABASE_URL, commandTimeout: 2_000 })
   * ```
   */
  postgres?: PostgresConnection | PostgresLockProviderOptions;
  /**
   * With `redis`: a grant counts only once this many replicas of the Redis
   * master have it (Redis `WAIT`, bounded by `commandTimeout`); otherwise the
   * lock is given back and the call fails with {@link LockStoreError}. For
   * fencing tokens that survive a failover without relying on the servers'
   * clocks. Costs each grant a round trip and the replicas' acknowledgement,
   * during which the connection serves no other call. Default `0` (off).
   * See `RedisLockProviderOptions.waitForReplicas`.
   */
  waitForReplicas?: number;
  /**
   * Upper bound in ms on every call to the store (acquire, release, extend,
   * ping), also while the client reconnects. Past it the call fails with
   * {@link LockStoreError} instead of hanging. Default `2000`. Not used by the
   * in-memory store.
   */
  commandTimeout?: number;
  /**
   * At boot, check once that the store answers (a ping, bounded by
   * `commandTimeout`; for PostgreSQL also that the lock table is there).
   * `'warn'` (default): log one warning with the cause (refused, unknown host,
   * wrong password, missing database...) and boot anyway; locks fail with
   * {@link LockStoreError} until the store works. `'fail'`: stop the boot
   * with that error. `false`: no check. Not used by the in-memory store.
   */
  verifyOnBoot?: 'warn' | 'fail' | false;
  /** Prefix of every store key, so lock keys never collide with the app's own. Default `'lock:'`. */
  keyPrefix?: string;
  /** Default lease in ms. Default `30000`. */
  ttl?: number;
  /** Default policy when a lock is held. Default `'throw'` (scheduled tasks default to `'skip'`). */
  onHeld?: OnHeld;
  /** Default longest wait in ms for `onHeld: 'wait'`. Default: unbounded. */
  waitTimeout?: number;
  /** Default for lease renewal while the holder runs. Default `true`. */
  renew?: boolean;
  /** Default cap in ms on how long renewal may keep a lock. Default: none. */
  maxHold?: number;
  /**
   * When a lock this process holds in a shared store (Redis, PostgreSQL) is
   * released while other callers of this process wait for it, pass it to the
   * first of them in-process: the store's lease and owner carry over, the
   * fencing token comes from a block the grant reserved, and there is no
   * store round trip. Only callers that queued before this process got the
   * lock are served this way (and at most 15 per grant); later ones queue at
   * the store behind the other processes. Processes thus take turns, each
   * running the batch of its own waiters (FIFO within a process, FIFO
   * between the processes' turns), which keeps waits close to strict FIFO
   * and cuts store calls and cross-process wake-ups. `false`: every waiter
   * queues at the store, strictly in arrival order. Default `true`.
   */
  localHandOff?: boolean;
  /**
   * This replica's id, as other replicas see it when it leads a name (see
   * `@Leader` and `LeaderService.leader()`). Default `<hostname>:<pid>`.
   * When set, every lock this replica takes names it too, so that
   * `LockService.inspect()` and the lock page of any replica show who holds
   * it (the owner tokens in the store grow by the id's length). Unset, only
   * leader locks name their instance.
   */
  instanceId?: string;
  /** Called for every lock event (acquired, released, contended, ...). Must not throw; errors are logged and ignored. */
  onEvent?: (event: LockEvent) => void;
  /**
   * OpenTelemetry metrics and spans (needs the optional peer
   * `@opentelemetry/api`). Default `'auto'`: on when the package is
   * installed and an OpenTelemetry SDK is registered when the module starts,
   * else off at no cost. `true` or options: on (fails at start when the
   * package is missing). `false`: off. See the README's "Metrics and traces".
   */
  telemetry?: boolean | 'auto' | LockTelemetryOptions;
}
