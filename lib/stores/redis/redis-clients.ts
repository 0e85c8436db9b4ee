import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import {
  endpointOf,
  noAnswerDetail,
  optionMessage,
  providerOptionsMessage,
  redisCause,
  redisConnectionTypeMessage,
  expected,
  providerOptionsExamples,
  storeAt,
  storeCauses,
  waitForReplicasClusterMessage,
  waitForReplicasMessage,
} from '../../errors/lock.messages.js';
import { DEFAULT_COMMAND_TIMEOUT, MAX_DURATION_MS } from '../../contract/lock.constants.js';
import { assertDuration } from '../../contract/lock-limits.validation.js';
import { assertRedisConnection, isRedisClient } from '../connection-options.validation.js';
import { loadOptionalPeer } from '../optional-peer.js';
import { silentLogger, type LockLogger } from '../../contract/lock-logger.interface.js';
import type { RedisConnection, RedisLockProviderOptions } from './redis-lock-provider.interface.js';

/** An ioredis client: standalone (also Sentinel-managed) or Cluster. */
export type RedisClient = Redis | Cluster;

/** {@link RedisLockProviderOptions}, checked, with their defaults. @internal */
export interface RedisSettings {
  readonly redis: RedisConnection;
  readonly commandTimeout: number;
  readonly channel: string;
  /** Whole milliseconds. */
  readonly waiterLease: number;
  readonly waitForReplicas: number;
  readonly evictionCheck: 'warn' | 'fail' | false;
  readonly logger: LockLogger;
}

/** Checks the provider's options (a {@link LockOptionsError} names the first wrong one) and fills in the defaults. @internal */
export function redisSettings(options: RedisLockProviderOptions): RedisSettings {
  if (options === null || typeof options !== 'object') {
    throw new LockOptionsError(providerOptionsMessage('RedisLockProvider', providerOptionsExamples.redis));
  }
  const { redis, commandTimeout = DEFAULT_COMMAND_TIMEOUT, channel = 'nest-lock:grants' } = options;
  assertDuration(commandTimeout, 'commandTimeout', 'RedisLockProvider', false);
  const waiterLease = options.waiterLease ?? Math.min(MAX_DURATION_MS, Math.max(5_000, 3 * commandTimeout));
  assertDuration(waiterLease, 'waiterLease', 'RedisLockProvider', false);
  if (typeof channel !== 'string' || channel.length === 0) {
    throw new LockOptionsError(optionMessage('RedisLockProvider', 'channel', expected.nonEmptyString, channel));
  }
  assertRedisConnection(redis, 'RedisLockProvider');
  const { waitForReplicas = 0 } = options;
  if (!(typeof waitForReplicas === 'number' && Number.isInteger(waitForReplicas) && waitForReplicas >= 0)) {
    throw new LockOptionsError(waitForReplicasMessage('RedisLockProvider', String(waitForReplicas)));
  }
  const { evictionCheck = 'warn', logger = silentLogger } = options;
  if (evictionCheck !== 'warn' && evictionCheck !== 'fail' && evictionCheck !== false) {
    throw new LockOptionsError(optionMessage('RedisLockProvider', 'evictionCheck', expected.warnFailOrFalse, evictionCheck));
  }
  if (logger === null || typeof logger !== 'object' || typeof logger.warn !== 'function') {
    throw new LockOptionsError(optionMessage('RedisLockProvider', 'logger', expected.logger, logger));
  }
  return { redis, commandTimeout, channel, waiterLease: Math.ceil(waiterLease), waitForReplicas, evictionCheck, logger };
}

/** Whether `client` is an ioredis `Cluster`. @internal */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** The socket of a standalone client, whose writes can be held back and sent together; `undefined` for a Cluster. @internal */
export function corkable(client: RedisClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as { stream?: { cork?: () => void; uncork?: () => void } }).stream;
  if (isCluster(client) || stream === undefined || typeof stream.cork !== 'function' || typeof stream.uncork !== 'function') return undefined;
  return stream as { cork(): void; uncork(): void };
}

/** Where the client connects, for messages: `host:port` (a socket path; a Cluster's first nodes), never a password. @internal */
export function endpoint(client: RedisClient): string {
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

const noop = (): void => {};

/**
 * The connections of a {@link RedisLockProvider}: the main client (yours, or
 * one it opened from a URL or options), the subscriber it duplicates from it,
 * their last connection errors (the causes in messages), and closing them.
 * @internal
 */
export class RedisClients {
  /** The client that runs the scripts. */
  readonly main: RedisClient;
  /** The provider opened {@link main} (and closes it). */
  private readonly owned: boolean;
  private readonly ready = new WeakMap<RedisClient, Promise<void>>();
  /** Per client, the last connection error it reported (cleared when it is ready again): the cause in messages. */
  private readonly lastErrors = new WeakMap<RedisClient, unknown>();
  /** The server rejected the configured database index: calls on the main client fail with it (they would run on another database). */
  private rejectedDb: unknown;

  constructor(
    redis: RedisConnection,
    private readonly commandTimeout: number,
    waitForReplicas: number,
  ) {
    if (isRedisClient(redis)) {
      this.main = redis;
      this.owned = false;
    } else if (typeof redis === 'string' || (redis !== null && typeof redis === 'object' && !Array.isArray(redis))) {
      // Our own connection: fail fast instead of queueing while disconnected, and never
      // replay a command after a reconnect (the caller has long been told it failed).
      const own: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 0, autoResendUnfulfilledCommands: false };
      // A connection that cannot complete (a TLS mismatch, a black-holed port) fails a little before a call's
      // bound ends, so that the call names the cause (unless you set connectTimeout yourself).
      const connectTimeout = Math.max(1, Math.floor(commandTimeout * 0.9));
      const { Redis } = loadOptionalPeer<typeof import('ioredis')>('ioredis', 'RedisLockProvider');
      this.main = typeof redis === 'string' ? new Redis(redis, { connectTimeout, ...own }) : new Redis({ connectTimeout, ...(redis as RedisOptions), ...own });
      this.owned = true;
    } else {
      throw new LockOptionsError(redisConnectionTypeMessage('RedisLockProvider', redis));
    }
    if (waitForReplicas > 0 && isCluster(this.main)) {
      throw new LockOptionsError(waitForReplicasClusterMessage());
    }
    this.watchErrors(this.main); // reported through the calls that fail, with this cause
  }

  /** The error with which the server rejected the main client's database index, if it did. */
  get dbRejected(): unknown {
    return this.rejectedDb;
  }

  /** A connection for pub/sub, like the main one; it queues while disconnected and resubscribes after a reconnect. */
  subscriber(): RedisClient {
    const main = this.main;
    const sub = isCluster(main) ? main.duplicate() : main.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true });
    this.watchErrors(sub);
    return sub;
  }

  /** The cause of the main client's latest connection failure, in words, or `undefined` while connected without trouble. */
  lastFailure(): string | undefined {
    const err = this.rejectedDb ?? this.lastErrors.get(this.main);
    return err === undefined ? undefined : this.causeOf(this.main, err);
  }

  /** A failed call as a {@link LockStoreError}: the cause in words (a lost connection: the last connection error), the error as `cause`. */
  storeError(operation: string, client: RedisClient, err: unknown, at: string): LockStoreError {
    const cause = isNotConnected(err) ? (this.lastErrors.get(client) ?? err) : err;
    return new LockStoreError(operation, `${this.causeOf(client, cause)}${at}`, { cause });
  }

  /** A call that got no answer within the command timeout, with the client's last connection error as the likely cause. */
  noAnswer(operation: string, client: RedisClient, at: string): LockStoreError {
    const last = this.lastErrors.get(client);
    const cause = last === undefined ? undefined : this.causeOf(client, last);
    return new LockStoreError(operation, `${noAnswerDetail(storeAt('Redis', endpoint(client)), this.commandTimeout, cause)}${at}`, { cause: last });
  }

  /** Resolves when `client` is ready; rejects at once when it was closed for good. */
  connected(client: RedisClient): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    if (client.status === 'end') return Promise.reject(new Error(storeCauses.connectionClosed));
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

  /** Calls `onLost` when the main client's connection closes (for a Cluster also when a node leaves); returns the unsubscribe. */
  watchConnection(onLost: () => void): () => void {
    const client = this.main;
    const lost = (): void => onLost();
    client.on('close', lost);
    if (isCluster(client)) client.on('-node', lost);
    return () => {
      client.off('close', lost);
      if (isCluster(client)) client.off('-node', lost);
    };
  }

  /** Quits `subscriber`, and the main client if the provider opened it (a client you passed in stays open). */
  async close(subscriber: RedisClient | undefined): Promise<void> {
    await Promise.allSettled([subscriber && this.quit(subscriber), this.owned ? this.quit(this.main) : undefined]);
  }

  /** Remembers each client's last connection error (what calls report); forgets it once the client is ready. */
  private watchErrors(client: RedisClient): void {
    client.on('error', (err: unknown) => {
      if (client === this.main && isDbRejected(err)) this.rejectedDb = err;
      else this.lastErrors.set(client, err);
    });
    client.on('ready', () => this.lastErrors.delete(client));
  }

  /** What a client error means, in words, for this client (its address, and whether it speaks TLS). */
  private causeOf(client: RedisClient, err: unknown): string {
    const tls = !isCluster(client) && Boolean((client as { options?: { tls?: unknown } }).options?.tls);
    return redisCause(endpoint(client), err, tls);
  }

  /** QUIT (bounded), then disconnect; resolves when the connection has ended. */
  private async quit(client: RedisClient): Promise<void> {
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
