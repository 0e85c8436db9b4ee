import { createClient } from 'redis';
import { InMemoryLockProvider, LockManager, type LockManagerOptions, type LockProvider } from '../../lib/index.js';
import { RedisLockProvider } from '../../lib/stores/redis/index.js';
import { PostgresLockProvider } from '../../lib/stores/postgres/index.js';
import type { BenchEnv, Contender, LockClient } from './contender.js';
import { startReplica } from '../support/redis-server.js';

/** A provider on a client the contender opened itself (the provider leaves it open): closed after the provider. */
interface OwnClient {
  provider: LockProvider;
  closeClient(): Promise<void>;
}

/**
 * This library: `LockManager.withLock(name, fn, { onHeld: 'wait' })` over a
 * provider, with its defaults (lease renewal on, FIFO wake-up on release,
 * local hand-off between callers of one process).
 */
export function ours(
  id: string,
  label: string,
  store: Contender['store'],
  provider: (env: BenchEnv) => Promise<LockProvider | OwnClient>,
  localHandOff = true,
  extra: () => Promise<Partial<LockManagerOptions>> = async () => ({}),
): Contender {
  return {
    id,
    label,
    store,
    kind: 'ours',
    retry: '-',
    waits: localHandOff
      ? 'FIFO queue, woken on release; callers of one process hand over in-process (localHandOff)'
      : 'strict FIFO queue across all callers, woken on release (localHandOff: false)',
    async create(env) {
      const built = await provider(env);
      const { provider: p, closeClient } =
        'closeClient' in built ? built : { provider: built, closeClient: async () => {} };
      const manager = new LockManager({ provider: p, ttl: env.ttl, localHandOff, ...(await extra()) });
      const options = { onHeld: 'wait' as const };
      const client: LockClient = {
        // No async wrapper of its own: every contender hands back its library's promise as it is.
        withLock(name, fn) {
          return manager.withLock(name, fn, options) as ReturnType<typeof fn>;
        },
        async close() {
          await manager.close();
          await p.close();
          await closeClient();
        },
      };
      return client;
    },
  };
}

/** In memory, in a process where `@opentelemetry/api` cannot be loaded (as if not installed): the reference of the two OpenTelemetry rows. */
export const oursMemory: Contender = {
  ...ours('ours-memory', 'nest-lock (memory)', 'memory', async () => new InMemoryLockProvider()),
  openTelemetryApi: 'hidden',
};

export const oursRedis = ours(
  'ours-redis',
  'nest-lock (redis)',
  'redis',
  async (env) => new RedisLockProvider({ redis: env.redisUrl }),
);

/**
 * The same store on a node-redis client (`createClient()`, RESP2) the app
 * passes in: the node-redis adapter against the ioredis one of `ours-redis`
 * (docs/performance.md, "Your client").
 */
export const oursNodeRedis = ours('ours-node-redis', 'nest-lock (redis), node-redis client', 'redis', async (env) => {
  const client = createClient({ url: env.redisUrl });
  await client.connect();
  return { provider: new RedisLockProvider({ redis: client }), closeClient: async () => void (await client.close()) };
});

/**
 * The same with `localHandOff: false`: every waiter queues in Redis, in
 * strict arrival order across processes. A reference row for scenario 3
 * (what strict FIFO costs, and how long its waits get on the same machine).
 */
export const oursRedisStrict = ours(
  'ours-redis-strict',
  'nest-lock (redis), localHandOff: false',
  'redis',
  async (env) => new RedisLockProvider({ redis: env.redisUrl }),
  false,
);

export const oursPostgres = ours(
  'ours-postgres',
  'nest-lock (postgres)',
  'postgres',
  async (env) => new PostgresLockProvider({ connection: env.pgUrl, tableName: 'bench_nest_locks' }),
);

/**
 * In memory, with `@opentelemetry/api` installed and loaded (`telemetry:
 * 'auto'`) but no SDK registered: telemetry stays off and must cost nothing
 * (at least 0.9× the `ours-memory` row, which runs without the package).
 */
export const oursMemoryOtelIdle: Contender = {
  ...ours(
    'ours-memory-otel-idle',
    'nest-lock (memory), OpenTelemetry API, no SDK',
    'memory',
    async () => new InMemoryLockProvider(),
    true,
    async () => ({ telemetry: 'auto' }),
  ),
  openTelemetryApi: 'loaded',
};

/**
 * In memory, with an OpenTelemetry SDK recording the metrics and spans: what
 * telemetry costs when it is on. The metric reader is never collected: what
 * a running app pays per call, without the export. The SDK is imported here
 * only, so that the processes of the other rows never load it.
 */
export const oursMemoryOtelSdk: Contender = {
  ...ours(
    'ours-memory-otel-sdk',
    'nest-lock (memory), OpenTelemetry SDK recording',
    'memory',
    async () => new InMemoryLockProvider(),
    true,
    async () => {
      const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
      const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
      class IdleReader extends MetricReader {
        protected async onForceFlush(): Promise<void> {}
        protected async onShutdown(): Promise<void> {}
      }
      return {
        telemetry: {
          meterProvider: new MeterProvider({ readers: [new IdleReader()] }),
          tracerProvider: new BasicTracerProvider(),
        },
      };
    },
  ),
  openTelemetryApi: 'loaded',
};

/**
 * `waitForReplicas: 1` against a replica of the bench's Redis that the
 * contender starts (and stops on close): what it costs a grant to wait until
 * a replica has it (scenarios 1 and 2).
 */
const replicated = ours(
  'ours-redis-replicas',
  'nest-lock (redis), waitForReplicas: 1',
  'redis',
  async (env) => new RedisLockProvider({ redis: env.redisUrl, waitForReplicas: 1 }),
);
export const oursRedisReplicated: Contender = {
  ...replicated,
  waits: `${replicated.waits}; each grant waits for 1 replica (WAIT)`,
  async create(env) {
    const replica = await startReplica(env.redisUrl);
    try {
      const client = await replicated.create(env);
      return {
        withLock: client.withLock,
        async close() {
          await client.close();
          await replica.stop();
        },
      };
    } catch (err) {
      await replica.stop();
      throw err;
    }
  },
};
