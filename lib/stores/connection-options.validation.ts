import type { Cluster, Redis } from 'ioredis';
import { LockOptionsError } from '../errors/lock.errors.js';
import type {
  IovalkeyClient,
  NodeRedisClient,
  NodeRedisCluster,
  NodeRedisSentinel,
} from './redis/redis-lock-provider.interface.js';
import {
  connectionUrlMessage,
  describeValue,
  mysqlConnectionMessage,
  mysqlPoolWithoutExecute,
  nodeRedisClientMessage,
  optionMessage,
  redisConnectionTypeMessage,
  redisForeignOptionMessage,
  connectionUrlProblems,
  expected,
  optionPlaces,
  redisForeignOptions,
} from '../errors/lock.messages.js';

/**
 * Static checks of store connection options: what can never work fails at
 * `forRoot` (or at boot for `forRootAsync`, or in the provider's constructor)
 * with {@link LockOptionsError}, before any connection is tried. What only
 * the server can tell (refused, unknown host, password) is the boot check's.
 * Messages name scheme, host and port, never the password. @internal
 */

/** A live client or pool, passed in by the app: nothing to check statically. */
const isObjectWith = (value: unknown, method: string): boolean =>
  value !== null && typeof value === 'object' && typeof (value as Record<string, unknown>)[method] === 'function';

/** An ioredis `Redis` or `Cluster` client, also from another copy of ioredis (or iovalkey, its fork). */
export function isIoredisClient(value: unknown): boolean {
  const v = value as { evalsha?: unknown; duplicate?: unknown; status?: unknown } | null;
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof v.evalsha === 'function' &&
    typeof v.duplicate === 'function' &&
    typeof v.status === 'string'
  );
}

/** The node-redis classes the store takes: `createClient()` and `createCluster()`. */
const NODE_REDIS_TAKEN = new Set(['RedisClient', 'RedisCluster', 'RedisSentinel']);

/** A client the Redis store takes, by library. @internal */
export type TakenRedisClient =
  | { readonly library: 'ioredis'; readonly client: Redis | Cluster | IovalkeyClient }
  | { readonly library: 'node-redis'; readonly client: NodeRedisClient | NodeRedisCluster | NodeRedisSentinel };

/** `value` as a client the store takes, with its library (`'ioredis'`: also iovalkey), or `undefined`. @internal */
export function takenRedisClient(value: unknown): TakenRedisClient | undefined {
  if (isIoredisClient(value)) return { library: 'ioredis', client: value as Redis | Cluster | IovalkeyClient };
  const nodeRedis = nodeRedisClass(value);
  return nodeRedis !== undefined && NODE_REDIS_TAKEN.has(nodeRedis)
    ? { library: 'node-redis', client: value as NodeRedisClient | NodeRedisCluster | NodeRedisSentinel }
    : undefined;
}

/** An object literal (or `Object.create(null)`), from any realm: what ioredis options are. A class instance is not. */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** Methods of a client (or a wrapper of one) that no ioredis option is named after: an options object with one is not options. */
const CLIENT_METHODS = ['connect', 'sendCommand', 'evalsha', 'evalSha', 'get', 'set', 'quit'];

/** The base class of a node-redis client (`RedisClient`, `RedisCluster`, `RedisSentinel`, `RedisClientPool`), if `value` is one. */
function nodeRedisClass(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as { evalSha?: unknown; sendCommand?: unknown; isOpen?: unknown };
  if (typeof v.evalSha !== 'function' || typeof v.sendCommand !== 'function' || typeof v.isOpen !== 'boolean')
    return undefined;
  // createClient() returns an instance of a generated subclass named `Class`: name the node-redis class it extends.
  for (
    let p = Object.getPrototypeOf(value) as object | null;
    p !== null;
    p = Object.getPrototypeOf(p) as object | null
  ) {
    const name = (p as { constructor?: { name?: string } }).constructor?.name;
    if (name !== undefined && /^Redis[A-Z]\w*$/.test(name)) return name;
  }
  return 'client';
}

/**
 * Checks `redis`: a URL, a plain object of ioredis options, an ioredis or
 * iovalkey client, or a node-redis client, cluster or Sentinel client (not
 * checked further). Anything else is refused (a node-redis pool too): ioredis would
 * read it as options and connect to its default, 127.0.0.1:6379.
 */
export function assertRedisConnection(redis: unknown, where: string): void {
  if (takenRedisClient(redis) !== undefined) return;
  if (typeof redis === 'string') return assertRedisUrl(redis, where);
  if (redis === null || typeof redis !== 'object' || Array.isArray(redis) || !isPlainObject(redis)) {
    const nodeRedis = nodeRedisClass(redis);
    throw new LockOptionsError(
      nodeRedis === undefined ? redisConnectionTypeMessage(where, redis) : nodeRedisClientMessage(where, nodeRedis),
    );
  }
  const o = redis as Record<string, unknown>;
  const method = CLIENT_METHODS.find((m) => typeof o[m] === 'function');
  if (method !== undefined) throw new LockOptionsError(redisConnectionTypeMessage(where, redis, method));
  const foreign = Object.keys(redisForeignOptions).find((k) => o[k] !== undefined);
  if (foreign !== undefined)
    throw new LockOptionsError(redisForeignOptionMessage(where, foreign, redisForeignOptions[foreign]!));
  assertPort(o.port, `${where}: redis.port`);
  if (o.db !== undefined && !(typeof o.db === 'number' && Number.isInteger(o.db) && o.db >= 0)) {
    throw new LockOptionsError(optionMessage(where, 'redis.db', expected.redisDb, o.db));
  }
  if (o.host !== undefined && (typeof o.host !== 'string' || o.host.length === 0)) {
    throw new LockOptionsError(optionMessage(where, 'redis.host', expected.host, o.host));
  }
}

/** Checks `postgres`: a URL, a PoolConfig (its `connectionString` and `port`), or a Pool (not checked). */
export function assertPostgresConnection(connection: unknown, where: string): void {
  if (isObjectWith(connection, 'connect')) return;
  if (typeof connection === 'string') return assertPostgresUrl(connection, where);
  if (connection === null || typeof connection !== 'object' || Array.isArray(connection)) return;
  const o = connection as Record<string, unknown>;
  if (typeof o.connectionString === 'string') assertPostgresUrl(o.connectionString, `${where} (connectionString)`);
  assertPort(o.port, `${where}: postgres.port`);
}

/**
 * Checks `mysql`: a `mysql://` URL, a plain object of `mysql2` pool options
 * (its `uri` and `port`), or a `mysql2` pool (not checked further). A pool
 * without `execute` (the `mysql` package's) is refused.
 */
export function assertMysqlConnection(connection: unknown, where: string): void {
  if (isObjectWith(connection, 'getConnection')) {
    const c = connection as { execute?: unknown; pool?: { execute?: unknown } };
    if (typeof c.execute === 'function' || typeof c.pool?.execute === 'function') return;
    throw new LockOptionsError(mysqlConnectionMessage(where, mysqlPoolWithoutExecute));
  }
  if (typeof connection === 'string') return assertMysqlUrl(connection, where);
  if (
    connection === null ||
    typeof connection !== 'object' ||
    Array.isArray(connection) ||
    !isPlainObject(connection)
  ) {
    throw new LockOptionsError(mysqlConnectionMessage(where, describeValue(connection)));
  }
  const o = connection as Record<string, unknown>;
  if (typeof o.uri === 'string') assertMysqlUrl(o.uri, `${where} (uri)`);
  assertPort(o.port, `${where}: mysql.port`);
}

function assertMysqlUrl(url: string, where: string): void {
  const parts = splitUrl(url, where, 'mysql://user[:password]@host[:port]/database');
  if (parts.scheme !== 'mysql:' && parts.scheme !== 'mariadb:') {
    throw new LockOptionsError(
      connectionUrlMessage(where, connectionUrlProblems.mysqlScheme(parts.scheme, parts.host)),
    );
  }
  checkUrlPort(parts, where, 'mysql');
}

function assertRedisUrl(url: string, where: string): void {
  // ioredis also takes a unix socket path or a bare port.
  if (url.startsWith('/') || /^\d+$/.test(url)) {
    if (/^\d+$/.test(url)) assertPort(Number(url), optionPlaces.redisPort(where));
    return;
  }
  const parts = splitUrl(url, where, 'redis://[:password@]host[:port][/db]');
  if (parts.scheme !== 'redis:' && parts.scheme !== 'rediss:') {
    throw new LockOptionsError(
      connectionUrlMessage(where, connectionUrlProblems.redisScheme(parts.scheme, parts.host)),
    );
  }
  checkUrlPort(parts, where, 'redis');
  const db = parts.path.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) {
    throw new LockOptionsError(connectionUrlMessage(where, connectionUrlProblems.redisDatabase(db, parts.host)));
  }
}

function assertPostgresUrl(url: string, where: string): void {
  if (!url.includes('://')) return; // a socket path or key=value settings: pg reads it
  const parts = splitUrl(url, where, 'postgres://user[:password]@host[:port]/database');
  if (parts.scheme !== 'postgres:' && parts.scheme !== 'postgresql:') {
    throw new LockOptionsError(
      connectionUrlMessage(where, connectionUrlProblems.postgresScheme(parts.scheme, parts.host)),
    );
  }
  checkUrlPort(parts, where, 'postgres');
}

interface UrlParts {
  scheme: string;
  host: string;
  port: string;
  path: string;
}

/** Splits a URL without `URL` (which rejects a port out of range with no word on why), and without keeping the password. */
function splitUrl(url: string, where: string, shape: string): UrlParts {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?([^?#]*)/.exec(url);
  if (!m) throw new LockOptionsError(connectionUrlMessage(where, connectionUrlProblems.notAUrl(shape)));
  return { scheme: m[1].toLowerCase(), host: m[2] || '(none)', port: m[3] ?? '', path: m[4] ?? '' };
}

function checkUrlPort(parts: UrlParts, where: string, store: string): void {
  if (parts.port === '') return;
  const port = Number(parts.port);
  if (!/^\d+$/.test(parts.port) || port < 1 || port > 65_535) {
    throw new LockOptionsError(connectionUrlMessage(where, connectionUrlProblems.port(store, parts.port, parts.host)));
  }
}

function assertPort(port: unknown, label: string): void {
  if (port === undefined) return;
  const n = typeof port === 'string' && /^\d+$/.test(port) ? Number(port) : port; // from env: a numeric string works too
  if (!(typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65_535)) {
    const [where, option] = label.split(': ');
    throw new LockOptionsError(optionMessage(where, option ?? 'port', expected.port, port));
  }
}
