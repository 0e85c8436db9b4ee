import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import {
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
import { assertRedisConnection, takenRedisClient } from '../connection-options.validation.js';
import { silentLogger, type LockLogger } from '../../contract/lock-logger.interface.js';
import type { RedisConnection, RedisLockProviderOptions } from './redis-lock-provider.interface.js';
import { isNotConnected, type RedisPort } from './redis-client.port.js';
import { IoredisPort, openIoredis } from './ioredis.adapter.js';
import { NodeRedisPort } from './node-redis.adapter.js';

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
    throw new LockOptionsError(
      optionMessage('RedisLockProvider', 'evictionCheck', expected.warnFailOrFalse, evictionCheck),
    );
  }
  if (logger === null || typeof logger !== 'object' || typeof logger.warn !== 'function') {
    throw new LockOptionsError(optionMessage('RedisLockProvider', 'logger', expected.logger, logger));
  }
  return {
    redis,
    commandTimeout,
    channel,
    waiterLease: Math.ceil(waiterLease),
    waitForReplicas,
    evictionCheck,
    logger,
  };
}

/** A client error that no reconnect cures: the server rejected the configured database index. */
const isDbRejected = (err: unknown): boolean => err instanceof Error && /DB index is out of range/i.test(err.message);

/**
 * The connections of a {@link RedisLockProvider}: the main client (yours, or
 * one it opened from a URL or options), the subscriber it duplicates from it,
 * their last connection errors (the causes in messages), and closing them.
 * @internal
 */
export class RedisClients {
  /** The client that runs the scripts. */
  readonly main: RedisPort;
  /** The provider opened {@link main} (and closes it). */
  private readonly owned: boolean;
  private readonly ready = new WeakMap<RedisPort, Promise<void>>();
  /** Per client, the last connection error it reported (cleared when it is ready again): the cause in messages. */
  private readonly lastErrors = new WeakMap<RedisPort, unknown>();
  /** The server rejected the configured database index: calls on the main client fail with it (they would run on another database). */
  private rejectedDb: unknown;

  constructor(
    redis: RedisConnection,
    private readonly commandTimeout: number,
    waitForReplicas: number,
  ) {
    const taken = takenRedisClient(redis);
    if (taken !== undefined) {
      this.main = taken.library === 'node-redis' ? new NodeRedisPort(taken.client) : new IoredisPort(taken.client);
      this.owned = false;
    } else if (typeof redis === 'string' || (redis !== null && typeof redis === 'object' && !Array.isArray(redis))) {
      this.main = openIoredis(redis as Parameters<typeof openIoredis>[0], commandTimeout);
      this.owned = true;
    } else {
      throw new LockOptionsError(redisConnectionTypeMessage('RedisLockProvider', redis));
    }
    if (waitForReplicas > 0 && this.main.cluster) {
      throw new LockOptionsError(waitForReplicasClusterMessage());
    }
    this.watchErrors(this.main); // reported through the calls that fail, with this cause
  }

  /** The error with which the server rejected the main client's database index, if it did. */
  get dbRejected(): unknown {
    return this.rejectedDb;
  }

  /** A connection for pub/sub, like the main one; it queues while disconnected and resubscribes after a reconnect. */
  subscriber(): RedisPort {
    const sub = this.main.subscriber();
    this.watchErrors(sub);
    return sub;
  }

  /** The cause of the main client's latest connection failure, in words, or `undefined` while connected without trouble. */
  lastFailure(): string | undefined {
    const err = this.rejectedDb ?? this.lastErrors.get(this.main);
    return err === undefined ? undefined : this.causeOf(this.main, err);
  }

  /** A failed call as a {@link LockStoreError}: the cause in words (a lost connection: the last connection error), the error as `cause`. */
  storeError(operation: string, client: RedisPort, err: unknown, at: string): LockStoreError {
    const cause = isNotConnected(err) ? (this.lastErrors.get(client) ?? err) : err;
    return new LockStoreError(operation, `${this.causeOf(client, cause)}${at}`, { cause });
  }

  /** A call that got no answer within the command timeout, with the client's last connection error as the likely cause. */
  noAnswer(operation: string, client: RedisPort, at: string): LockStoreError {
    const last = this.lastErrors.get(client);
    const cause = last === undefined ? undefined : this.causeOf(client, last);
    return new LockStoreError(
      operation,
      `${noAnswerDetail(storeAt('Redis', client.endpoint()), this.commandTimeout, cause)}${at}`,
      { cause: last },
    );
  }

  /** Resolves when `client` is ready; rejects at once when it was closed for good. */
  connected(client: RedisPort): Promise<void> {
    if (client.status === 'ready') return Promise.resolve();
    if (client.status === 'end') return Promise.reject(new Error(storeCauses.connectionClosed));
    let pending = this.ready.get(client);
    if (!pending) {
      const wasWaiting = client.status === 'wait';
      pending = new Promise<void>((resolve) => {
        const ready = (): void => {
          client.listen('ready', ready, false);
          this.ready.delete(client);
          resolve();
        };
        client.listen('ready', ready);
      });
      this.ready.set(client, pending);
      if (wasWaiting) client.connect(); // lazyConnect, or a node-redis client not opened yet
    }
    return pending;
  }

  /** Calls `onLost` when the main client's connection closes (for a Cluster also when a node leaves); returns the unsubscribe. */
  watchConnection(onLost: () => void): () => void {
    const lost = (): void => onLost();
    this.main.listen('lost', lost);
    return () => this.main.listen('lost', lost, false);
  }

  /** Quits `subscriber`, and the main client if the provider opened it (a client you passed in stays open). */
  async close(subscriber: RedisPort | undefined): Promise<void> {
    await Promise.allSettled([subscriber && this.quit(subscriber), this.owned ? this.quit(this.main) : undefined]);
  }

  /** Remembers each client's last connection error (what calls report); forgets it once the client is ready. */
  private watchErrors(client: RedisPort): void {
    client.listen('error', (err: unknown) => {
      if (client === this.main && isDbRejected(err)) this.rejectedDb = err;
      else this.lastErrors.set(client, err);
    });
    client.listen('ready', () => this.lastErrors.delete(client));
  }

  /** What a client error means, in words, for this client (its address, and whether it speaks TLS). */
  private causeOf(client: RedisPort, err: unknown): string {
    return redisCause(client.endpoint(), err, client.tls);
  }

  /** QUIT (bounded), then disconnect; resolves when the connection has ended. */
  private async quit(client: RedisPort): Promise<void> {
    if (client.status === 'end') return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = client.ended();
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
