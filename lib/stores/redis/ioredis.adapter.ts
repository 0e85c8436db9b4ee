import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { endpointOf } from '../../errors/lock.messages.js';
import { loadOptionalPeer } from '../optional-peer.js';
import type { IovalkeyClient } from './redis-lock-provider.interface.js';
import {
  EventedPort,
  type Corkable,
  type PipelineReply,
  type PortEvents,
  type RedisArgs,
  type RedisPort,
  type RedisStatus,
} from './redis-client.port.js';

/** An ioredis (or iovalkey: same API) client, standalone (also Sentinel-managed) or Cluster. */
type IoClient = Redis | Cluster;

/**
 * A connection the provider opens from a URL or ioredis options (ioredis is
 * the default client): it fails fast instead of queueing while
 * disconnected, never replays a command after a reconnect (the caller has
 * long been told it failed), and a connection that cannot complete (a TLS
 * mismatch, a black-holed port) fails a little before a call's bound ends,
 * so that the call names the cause (unless you set `connectTimeout`). @internal
 */
export function openIoredis(redis: string | RedisOptions, commandTimeout: number): IoredisPort {
  const own: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  };
  const connectTimeout = Math.max(1, Math.floor(commandTimeout * 0.9));
  const { Redis } = loadOptionalPeer<typeof import('ioredis')>('ioredis', 'RedisLockProvider');
  return new IoredisPort(
    typeof redis === 'string'
      ? new Redis(redis, { connectTimeout, ...own })
      : new Redis({ connectTimeout, ...redis, ...own }),
  );
}

/** ioredis events behind each port event (`'lost'`: `close`, and a Cluster's `-node`). */
const EVENTS: PortEvents = {
  ready: { standalone: ['ready'], cluster: ['ready'] },
  error: { standalone: ['error'], cluster: ['error'] },
  lost: { standalone: ['close'], cluster: ['close', '-node'] },
  'node-added': { standalone: [], cluster: ['+node'] },
};

/**
 * The {@link RedisPort} of an ioredis client, and of an iovalkey one (its
 * fork, with the same API). @internal
 */
export class IoredisPort extends EventedPort implements RedisPort {
  protected readonly events = EVENTS;
  readonly library = 'ioredis';
  readonly cluster: boolean;
  private readonly nodes = new WeakMap<Redis, IoredisPort>();
  /** The listener of each channel this connection subscribed to. */
  private readonly channels = new Map<string, (message: string) => void>();

  readonly client: IoClient;

  /** `client`: ioredis' own, or iovalkey's (typed by shape; its API is ioredis'). */
  constructor(client: IoClient | IovalkeyClient) {
    super();
    this.client = client as IoClient;
    this.cluster = (client as { isCluster?: boolean }).isCluster === true;
  }

  get tls(): boolean {
    return !this.cluster && Boolean((this.client as { options?: { tls?: unknown } }).options?.tls);
  }

  get status(): RedisStatus {
    const status = this.client.status;
    return status === 'ready' || status === 'wait' || status === 'end' ? status : 'connecting';
  }

  endpoint(): string {
    if (this.cluster) {
      const nodes =
        (this.client as { startupNodes?: Array<string | number | { host?: string; port?: number }> }).startupNodes ??
        [];
      const named = nodes
        .slice(0, 3)
        .map((n) => (typeof n === 'object' ? endpointOf(n.host ?? '127.0.0.1', n.port ?? 6379) : String(n)));
      return `${named.join(', ')}${nodes.length > 3 ? ', ...' : ''} (Cluster)`;
    }
    const o = (this.client as { options?: { host?: string; port?: number; path?: string | null } }).options ?? {};
    return o.path ? o.path : endpointOf(o.host, o.port);
  }

  evalsha(sha: string, keys: readonly string[], args: RedisArgs): Promise<unknown> {
    return this.client.evalsha(sha, keys.length, ...keys, ...args);
  }

  eval(source: string, keys: readonly string[], args: RedisArgs): Promise<unknown> {
    return this.client.eval(source, keys.length, ...keys, ...args);
  }

  command([name, ...args]: RedisArgs): Promise<unknown> {
    return this.client.call(String(name), ...args);
  }

  async pipeline(commands: readonly RedisArgs[]): Promise<PipelineReply[]> {
    // (ioredis names its command methods in lower case)
    const pipeline = this.client.pipeline(
      commands.map(([name, ...args]) => [String(name).toLowerCase(), ...args.map(String)]),
    );
    return ((await pipeline.exec()) ?? []) as PipelineReply[];
  }

  subscriber(): IoredisPort {
    const client = this.client;
    return new IoredisPort(
      this.cluster
        ? (client as Cluster).duplicate()
        : (client as Redis).duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, autoResubscribe: true }),
    );
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<void> {
    if (this.channels.size === 0)
      this.client.on('message', (on: string, message: string) => this.channels.get(on)?.(message));
    this.channels.set(channel, onMessage);
    await this.client.subscribe(channel);
  }

  masters(): Promise<RedisPort[]> {
    if (!this.cluster) return Promise.resolve([this]);
    return Promise.resolve(
      (this.client as Cluster).nodes('master').map((node) => {
        let port = this.nodes.get(node);
        if (!port) this.nodes.set(node, (port = new IoredisPort(node)));
        return port;
      }),
    );
  }

  masterOf(slot: number): string | undefined {
    return this.cluster ? (this.client as Cluster).slots[slot]?.join(';') : undefined;
  }

  corkable(): Corkable | undefined {
    const stream = (this.client as { stream?: Partial<Corkable> }).stream;
    if (
      this.cluster ||
      stream === undefined ||
      typeof stream.cork !== 'function' ||
      typeof stream.uncork !== 'function'
    )
      return undefined;
    return stream as Corkable;
  }

  connect(): void {
    this.client.connect().catch(() => {}); // a failure is reported by the 'error' event
  }

  async quit(): Promise<void> {
    await this.client.quit();
  }

  disconnect(): void {
    if (this.client.status !== 'end') this.client.disconnect();
  }

  ended(): Promise<void> {
    if (this.client.status === 'end') return Promise.resolve();
    return new Promise<void>((resolve) => this.client.once('end', () => resolve()));
  }
}
