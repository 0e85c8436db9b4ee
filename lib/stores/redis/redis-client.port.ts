/**
 * The client port of the Redis store: the few things {@link RedisLockProvider}
 * asks of a Redis client library, so that only the adapters know one
 * (`ioredis.adapter.ts`: ioredis and iovalkey; `node-redis.adapter.ts`:
 * node-redis v5+). What an adapter must do: docs/stores.md, "The client port".
 * @internal
 */

/** Arguments of a Redis command (its name first for {@link RedisPort.command}). @internal */
export type RedisArgs = ReadonlyArray<string | number>;

/** One reply of a pipeline: the command's error, or its reply. @internal */
export type PipelineReply = readonly [Error | null, unknown];

/**
 * Where a connection is: not opened yet (`'wait'`: an app's client created
 * with `lazyConnect`, or a node-redis client before `connect()`),
 * connecting or reconnecting, `'ready'` for commands, or closed for good.
 * @internal
 */
export type RedisStatus = 'wait' | 'connecting' | 'ready' | 'end';

/**
 * What a port reports: `'ready'` (connected, also after a reconnect),
 * `'error'` (the error the client saw: the cause in messages), `'lost'`
 * (the connection closed, or a Cluster node left: a Redis restarted without
 * persistence comes back empty), `'node-added'` (a Cluster node joined).
 * @internal
 */
export type RedisPortEvent = 'ready' | 'error' | 'lost' | 'node-added';

/** A socket whose writes can be held back and sent together. @internal */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

/**
 * One Redis client (standalone, Sentinel-managed or Cluster) as the store
 * uses it. Replies are what the library gives for RESP2 or RESP3 (numbers,
 * strings, arrays, `null`; maps as objects or `Map`s): the typed scripts
 * (`redis-script-calls.ts`) and the inspection decode them.
 * @internal
 */
export interface RedisPort {
  /** The client library, for messages. */
  readonly library: 'ioredis' | 'node-redis';
  /** The client the port drives (the app's, or one the store opened). */
  readonly client: object;
  /** Whether the client is a Cluster client (scripts are routed by their first key). */
  readonly cluster: boolean;
  /** Whether the connection speaks TLS (for the words of a connection error). */
  readonly tls: boolean;
  readonly status: RedisStatus;
  /** Where the client connects: `host:port`, a socket path, a Cluster's first nodes; never a password. */
  endpoint(): string;
  /** `EVALSHA sha numkeys keys... args...` (on a Cluster: on the master of the first key). */
  evalsha(sha: string, keys: readonly string[], args: RedisArgs): Promise<unknown>;
  /** `EVAL source numkeys keys... args...`: after NOSCRIPT. */
  eval(source: string, keys: readonly string[], args: RedisArgs): Promise<unknown>;
  /** A command without keys (`PING`, `INFO`, `WAIT`, `SCAN`) on this connection (a standalone client or one node). */
  command(args: RedisArgs): Promise<unknown>;
  /**
   * Commands sent together, each reply (or error) in order. On a Cluster
   * they are routed by `route` (a key: every command's keys share its master).
   */
  pipeline(commands: readonly RedisArgs[], route?: string): Promise<PipelineReply[]>;
  /** A new connection like this one for pub/sub: it queues while disconnected and subscribes again after a reconnect. The caller closes it. */
  subscriber(): RedisPort;
  /** Subscribes this (subscriber) connection to `channel`; `onMessage` gets each message on it. */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<void>;
  /** The masters (one port per node: this one for a standalone client). */
  masters(): Promise<RedisPort[]>;
  /** A name of the master that serves `slot` (Cluster), to group calls by node; `undefined` when not known. */
  masterOf(slot: number): string | undefined;
  /** The socket whose writes {@link RedisCommands} holds back, when the client has one to hold back. */
  corkable(): Corkable | undefined;
  /** Opens a connection not opened yet (status `'wait'`). */
  connect(): void;
  /** Adds `listener` to `event` (removes it with `add` false). */
  listen(event: RedisPortEvent, listener: (err?: unknown) => void, add?: boolean): void;
  /** Quits politely (QUIT, or node-redis' `close()`), on a ready connection. */
  quit(): Promise<void>;
  /** Drops the connection at once. */
  disconnect(): void;
  /** Resolves once the connection has ended (at once when it has). */
  ended(): Promise<void>;
}

/** The client library's events behind each port event, for a standalone and for a Cluster client. @internal */
export type PortEvents = Record<
  RedisPortEvent,
  { readonly standalone: readonly string[]; readonly cluster: readonly string[] }
>;

/** What adapters share: {@link RedisPort.listen} on the client library's events behind each port event. @internal */
export abstract class EventedPort {
  abstract readonly client: object;
  abstract readonly cluster: boolean;
  /** The library's events behind each port event. */
  protected abstract readonly events: PortEvents;

  listen(event: RedisPortEvent, listener: (err?: unknown) => void, add = true): void {
    const client = this.client as {
      on(name: string, listener: (err?: unknown) => void): unknown;
      off(name: string, listener: (err?: unknown) => void): unknown;
    };
    for (const name of this.events[event][this.cluster ? 'cluster' : 'standalone']) {
      if (add) client.on(name, listener);
      else client.off(name, listener);
    }
  }
}

/** Names of the error classes of a reply Redis gave (ioredis, node-redis), as opposed to a lost connection. */
const REPLY_ERRORS = new Set(['ReplyError', 'ErrorReply', 'SimpleError', 'BlobError']);

/** Whether `err` is an error reply of the server (NOSCRIPT, NOAUTH, a refused command), of any client library. @internal */
export function isReplyError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (REPLY_ERRORS.has(err.name)) return true;
  for (
    let p = Object.getPrototypeOf(err) as object | null;
    p !== null && p !== Error.prototype;
    p = Object.getPrototypeOf(p) as object | null
  ) {
    if (REPLY_ERRORS.has((p as { constructor?: { name?: string } }).constructor?.name ?? '')) return true;
  }
  return false;
}

/** An error of a command that only says the connection is down (of any client library): the last connection error says why. @internal */
export function isNotConnected(err: unknown): boolean {
  return (
    err instanceof Error &&
    /Stream isn't writeable|Connection is closed|max retries per request|The client is closed|client is offline|Socket closed unexpectedly/i.test(
      err.message,
    )
  );
}

/** Whether `err` says the script is not in the server's cache (EVAL follows). @internal */
export function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}
