import { endpointOf } from '../../errors/lock.messages.js';
import type { NodeRedisClient, NodeRedisCluster } from './redis-lock-provider.interface.js';
import { EventedPort, type Corkable, type PipelineReply, type PortEvents, type RedisArgs, type RedisPort, type RedisStatus } from './redis-client.port.js';

type Listener = (...args: never[]) => void;

/** Where a node-redis client connects: its `url` or `socket` options. */
interface NodeRedisOptions {
  url?: string;
  socket?: { host?: string; port?: number; path?: string; tls?: unknown };
  rootNodes?: NodeRedisOptions[];
}

/** The members of a node-redis v5 client (`createClient()`, `@redis/client`) the adapter uses. */
interface NodeClient {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  readonly options?: NodeRedisOptions;
  connect(): Promise<unknown>;
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): NodeClient;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

/** The members of a node-redis v5 Cluster client (`createCluster()`) the adapter uses. */
interface NodeCluster extends Omit<NodeClient, 'isReady' | 'sendCommand' | 'duplicate'> {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  duplicate(): NodeCluster;
  readonly masters: unknown[];
  readonly slots: Array<{ master?: { address?: string } } | undefined>;
  nodeClient(node: unknown): Promise<NodeClient>;
}

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
 * The {@link RedisPort} of a node-redis v5+ client: `createClient()` (also a
 * client that `createSentinel()`'s master hands out) or `createCluster()`.
 * A client not opened yet is opened by the first call (as ioredis'
 * `lazyConnect` one is); a client the app closed stays closed (its calls
 * fail). node-redis writes the commands of one tick together itself: no cork.
 * @internal
 */
export class NodeRedisPort extends EventedPort implements RedisPort {
  protected readonly events = EVENTS;
  readonly library = 'node-redis';
  readonly cluster: boolean;
  /** The client was open (or opened by us) once: closed now means ended. */
  private opened: boolean;
  private readonly nodes = new WeakMap<object, NodeRedisPort>();
  /** The listener of each channel (node-redis keeps one of each function: subscribing again adds none). */
  private readonly listeners = new Map<string, (message: string) => void>();

  readonly client: NodeClient | NodeCluster;

  /** `client`: as the public types describe it (by shape); the adapter uses the members below of node-redis 5. */
  constructor(client: NodeRedisClient | NodeRedisCluster | NodeClient) {
    super();
    this.client = client as NodeClient | NodeCluster;
    this.cluster = typeof (client as NodeCluster).nodeClient === 'function';
    this.opened = client.isOpen;
  }

  get tls(): boolean {
    const options = this.client.options;
    return Boolean(options?.socket?.tls) || /^rediss:/i.test(options?.url ?? '');
  }

  get status(): RedisStatus {
    if (!this.client.isOpen) return this.opened ? 'end' : 'wait';
    this.opened = true;
    return this.cluster || (this.client as NodeClient).isReady ? 'ready' : 'connecting';
  }

  endpoint(): string {
    const options = this.client.options;
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

  subscriber(): NodeRedisPort {
    return new NodeRedisPort(this.client.duplicate());
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
    await this.client.close();
  }

  disconnect(): void {
    if (this.client.isOpen) this.client.destroy();
  }

  ended(): Promise<void> {
    if (!this.client.isOpen) return Promise.resolve();
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

  /** Sends a command (node-redis takes strings), on a Cluster routed by `key`. */
  private send(key: string | undefined, args: RedisArgs): Promise<unknown> {
    const strings = args.map(String);
    return this.cluster ? (this.client as NodeCluster).sendCommand(key, false, strings) : (this.client as NodeClient).sendCommand(strings);
  }
}
