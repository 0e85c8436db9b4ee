import { endpointOf, sentinelMasterAt } from '../../errors/lock.messages.js';
import type { NodeRedisClient, NodeRedisCluster, NodeRedisSentinel } from './redis-lock-provider.interface.js';
import {
  EventedPort,
  type Corkable,
  type PipelineReply,
  type PortEvents,
  type RedisArgs,
  type RedisPort,
  type RedisPortEvent,
  type RedisStatus,
} from './redis-client.port.js';

type Listener = (...args: never[]) => void;

/** Where a node-redis client connects: its `url` or `socket` options. */
interface NodeRedisOptions {
  url?: string;
  socket?: { host?: string; port?: number; path?: string; tls?: unknown };
  rootNodes?: NodeRedisOptions[];
}

/** The members of a node-redis v5 or v6 client (`createClient()`, `@redis/client`) the adapter uses. */
interface NodeClient {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  readonly options?: NodeRedisOptions;
  /** Where a client without `options` keeps them (a Cluster client). */
  readonly _options?: NodeRedisOptions;
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): NodeClient;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

/** The members of a node-redis v5 or v6 Cluster client (`createCluster()`) the adapter uses. */
interface NodeCluster extends Omit<NodeClient, 'isReady' | 'sendCommand' | 'duplicate'> {
  /** v6: false until the slot map is known (its nodes are ready before); v5 has none. */
  readonly isReady?: boolean;
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  duplicate(): NodeCluster;
  readonly masters: unknown[];
  readonly slots: Array<{ master?: { address?: string } } | undefined>;
  nodeClient(node: unknown): Promise<NodeClient>;
}

/** The members of a node-redis v5 or v6 Sentinel client (`createSentinel()`) the adapter uses. */
interface NodeSentinel extends Omit<NodeClient, 'sendCommand' | 'duplicate' | 'destroy' | 'options' | '_options'> {
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  getMasterNode(): { host: string; port: number } | undefined;
  destroy(): Promise<unknown>;
  readonly options?: undefined;
  readonly _options?: undefined;
}

/** Which node-redis client: `createClient()`, `createCluster()` or `createSentinel()`. */
type NodeKind = 'client' | 'cluster' | 'sentinel';

/** node-redis events behind each port event. */
const EVENTS: PortEvents = {
  ready: { standalone: ['ready'], cluster: ['connect', 'node-ready'] },
  error: { standalone: ['error'], cluster: ['error', 'node-error'] },
  lost: { standalone: ['reconnecting', 'end'], cluster: ['node-reconnecting', 'node-disconnect', 'disconnect'] },
  'node-added': { standalone: [], cluster: ['node-connect'] },
};

/** `host:port` (or the socket path) of node-redis options, never the password. */
function where(options: NodeRedisOptions | undefined): string {
  if (options?.socket?.path) return options.socket.path;
  if (options?.url) {
    const m = /^[a-z]+:\/\/(?:[^@/]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d+))?/i.exec(options.url);
    if (m) return endpointOf(m[1] || '127.0.0.1', m[2] === undefined ? 6379 : Number(m[2]));
  }
  return endpointOf(options?.socket?.host ?? 'localhost', options?.socket?.port ?? 6379);
}

/**
 * The {@link RedisPort} of a node-redis v5 or v6 client: `createClient()`,
 * `createCluster()` or `createSentinel()` (commands to the master; its own
 * pub/sub connection, which follows a failover, is the subscriber).
 * A client not opened yet is opened by the first call (as ioredis'
 * `lazyConnect` one is); a client the app closed stays closed (its calls
 * fail). node-redis writes the commands of one tick together itself: no cork.
 * @internal
 */
export class NodeRedisPort extends EventedPort implements RedisPort {
  protected readonly events = EVENTS;
  readonly library = 'node-redis';
  readonly cluster: boolean;
  private readonly kind: NodeKind;
  /** The subscriber port of a Sentinel client is the client itself (its pub/sub connection): closing the port unsubscribes, and ends it. */
  private readonly shared: boolean;
  private released = false;
  /** The client's listener behind each `'ready'` listener of a Sentinel or Cluster client (it calls that one only when ready). */
  private readonly readyListeners = new Map<(err?: unknown) => void, Listener>();
  /** The client was open (or opened by us) once: closed now means ended. */
  private opened: boolean;
  private readonly nodes = new WeakMap<object, NodeRedisPort>();
  /** The listener of each channel (node-redis keeps one of each function: subscribing again adds none). */
  private readonly listeners = new Map<string, (message: string) => void>();

  readonly client: NodeClient | NodeCluster | NodeSentinel;

  /**
   * `client`: as the public types describe it (by shape); the adapter uses the members below of node-redis 5.
   * `shared`: the port is the subscriber of a Sentinel client (the app's, left open).
   */
  constructor(client: NodeRedisClient | NodeRedisCluster | NodeRedisSentinel | NodeClient, shared = false) {
    super();
    this.client = client as NodeClient | NodeCluster | NodeSentinel;
    this.cluster = typeof (client as NodeCluster).nodeClient === 'function';
    this.kind = this.cluster
      ? 'cluster'
      : typeof (client as NodeSentinel).getMasterNode === 'function'
        ? 'sentinel'
        : 'client';
    this.shared = shared;
    this.opened = client.isOpen;
  }

  /**
   * On a Sentinel client, `'ready'` is a master found (`topology-change` MASTER_CHANGE: at connect, after a failover); it reports no lost connection.
   * On a Cluster client, `'ready'` (a node ready, the Cluster connected) counts once the Cluster is ready (v6 readies its nodes before its slot map).
   */
  override listen(event: RedisPortEvent, listener: (err?: unknown) => void, add = true): void {
    if (event === 'ready' && this.kind === 'cluster') {
      return this.listenReady(listener, EVENTS.ready.cluster, () => this.clusterReady, add);
    }
    if (this.kind !== 'sentinel' || event === 'error') return super.listen(event, listener, add);
    if (event !== 'ready') return;
    this.listenReady(listener, ['topology-change'], (e?: { type?: string }) => e?.type === 'MASTER_CHANGE', add);
  }

  get tls(): boolean {
    const options = this.options; // a Sentinel client keeps its options private: reported as no TLS
    return Boolean(options?.socket?.tls) || /^rediss:/i.test(options?.url ?? '');
  }

  get status(): RedisStatus {
    if (this.released) return 'end';
    if (!this.client.isOpen) return this.opened ? 'end' : 'wait';
    this.opened = true;
    const ready = this.cluster ? this.clusterReady : (this.client as NodeClient).isReady;
    return ready ? 'ready' : 'connecting';
  }

  endpoint(): string {
    if (this.kind === 'sentinel') {
      const master = (this.client as NodeSentinel).getMasterNode();
      return sentinelMasterAt(master && endpointOf(master.host, master.port));
    }
    const options = this.options;
    if (!this.cluster) return where(options);
    const nodes = options?.rootNodes ?? [];
    return `${nodes
      .slice(0, 3)
      .map((n) => where(n))
      .join(', ')}${nodes.length > 3 ? ', ...' : ''} (Cluster)`;
  }

  evalsha(sha: string, keys: readonly string[], args: RedisArgs): Promise<unknown> {
    return this.send(keys[0], ['EVALSHA', sha, keys.length, ...keys, ...args]);
  }

  eval(source: string, keys: readonly string[], args: RedisArgs): Promise<unknown> {
    return this.send(keys[0], ['EVAL', source, keys.length, ...keys, ...args]);
  }

  command(args: RedisArgs): Promise<unknown> {
    return this.send(undefined, args);
  }

  /** The commands go out in one write (node-redis sends a tick's commands together). */
  pipeline(commands: readonly RedisArgs[], route?: string): Promise<PipelineReply[]> {
    return Promise.all(
      commands.map((c) =>
        this.send(route, c).then(
          (reply): PipelineReply => [null, reply],
          (err: unknown): PipelineReply => [err instanceof Error ? err : new Error(String(err)), undefined],
        ),
      ),
    );
  }

  /** A duplicate; on a Sentinel client the client itself, whose pub/sub connection follows the master. */
  subscriber(): NodeRedisPort {
    if (this.kind === 'sentinel') return new NodeRedisPort(this.client, true);
    return new NodeRedisPort((this.client as NodeClient | NodeCluster).duplicate());
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<void> {
    let listener = this.listeners.get(channel);
    if (!listener) this.listeners.set(channel, (listener = (message: string) => onMessage(String(message))));
    await this.client.subscribe(channel, listener);
  }

  async masters(): Promise<RedisPort[]> {
    if (!this.cluster) return [this];
    const cluster = this.client as NodeCluster;
    return Promise.all(
      cluster.masters.map(async (master) => {
        const client = await cluster.nodeClient(master);
        let port = this.nodes.get(client);
        if (!port) this.nodes.set(client, (port = new NodeRedisPort(client)));
        return port;
      }),
    );
  }

  masterOf(slot: number): string | undefined {
    return this.cluster ? (this.client as NodeCluster).slots[slot]?.master?.address : undefined;
  }

  corkable(): Corkable | undefined {
    return undefined;
  }

  connect(): void {
    this.opened = true;
    this.client.connect().catch(() => {}); // a failure is reported by the 'error' event
  }

  async quit(): Promise<void> {
    if (this.shared) return this.release();
    await this.client.close();
  }

  disconnect(): void {
    if (this.shared) void this.release();
    else if (this.client.isOpen) void this.client.destroy();
  }

  ended(): Promise<void> {
    if (!this.client.isOpen || this.released) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const end = (): void => {
        this.client.off('end', end);
        this.client.off('disconnect', end);
        resolve();
      };
      this.client.on('end', end);
      this.client.on('disconnect', end);
    });
  }

  /** The client's options: `options`, or `_options` where it keeps them there (a Cluster client). */
  private get options(): NodeRedisOptions | undefined {
    return this.client.options ?? this.client._options;
  }

  /** A Cluster client is ready once its slot map is known (v6 `isReady`; v5 has none: open is ready). */
  private get clusterReady(): boolean {
    return (this.client as NodeCluster).isReady !== false;
  }

  /** Adds (or removes) `listener` as the client's listener of `names`, called when `ready` says so. */
  private listenReady(
    listener: (err?: unknown) => void,
    names: readonly string[],
    ready: (event?: { type?: string }) => boolean,
    add: boolean,
  ): void {
    let onEvent = this.readyListeners.get(listener);
    if (add && !onEvent) {
      this.readyListeners.set(
        listener,
        (onEvent = ((event?: { type?: string }) => ready(event) && listener()) as Listener),
      );
      for (const name of names) this.client.on(name, onEvent);
    } else if (!add && onEvent) {
      this.readyListeners.delete(listener);
      for (const name of names) this.client.off(name, onEvent);
    }
  }

  /** Sends a command (node-redis takes strings), on a Cluster routed by `key`, on a Sentinel client to the master. */
  private send(key: string | undefined, args: RedisArgs): Promise<unknown> {
    const strings = args.map(String);
    if (this.kind === 'cluster') return (this.client as NodeCluster).sendCommand(key, false, strings);
    if (this.kind === 'sentinel') return (this.client as NodeSentinel).sendCommand(false, strings);
    return (this.client as NodeClient).sendCommand(strings);
  }

  /** The subscriber of a Sentinel client leaves its channels (the client stays the app's) and reports itself ended. */
  private async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    await Promise.allSettled(
      listeners.map(([channel, listener]) => (this.client as NodeSentinel).unsubscribe(channel, listener)),
    );
  }
}
