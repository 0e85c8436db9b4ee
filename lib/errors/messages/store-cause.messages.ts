/** What a store's client error means, in words, naming where the store is but never a password. @internal */

/** Where a store is, for messages: `host:port`, never a password. */
export const endpointOf = (host: string | undefined, port: number | string | undefined): string =>
  host === undefined ? 'an unknown address' : port === undefined || port === '' ? host : `${host}:${port}`;

/** Where a node-redis Sentinel client sends commands: the master the Sentinels name (`undefined`: not known yet). */
export const sentinelMasterAt = (master: string | undefined): string =>
  master === undefined
    ? 'the master of a node-redis Sentinel client (not known yet)'
    : `${master} (the master the Sentinels name)`;

/** What a Redis client error means, in a few words: "Redis at 127.0.0.1:6380 refused the connection (ECONNREFUSED)". */
export function redisCause(at: string, err: unknown, tls = false): string {
  const code = errorCode(err);
  const text = errorText(err);
  if (code === 'ECONNREFUSED')
    return `Redis at ${at} refused the connection (ECONNREFUSED): is Redis running there, and are host and port right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `the host name of Redis at ${at} was not found (${code}): check the host in the connection options`;
  if (code === 'ETIMEDOUT' && tls) {
    return `Redis at ${at} did not complete the TLS connection in time (ETIMEDOUT): check that the server speaks TLS on that port (rediss://), or use redis:// if it does not`;
  }
  if (code === 'ETIMEDOUT')
    return `Redis at ${at} did not accept the connection in time (ETIMEDOUT): check the network path and firewall`;
  if (code === 'ECONNRESET' || code === 'EPIPE') return `Redis at ${at} closed the connection (${code})`;
  if (/^Socket closed unexpectedly/i.test(text)) return `Redis at ${at} closed the connection (node-redis: ${text})`;
  if (/^WRONGPASS/.test(text))
    return `Redis at ${at} rejected the user name or password (WRONGPASS): check the credentials in the connection options`;
  if (/^NOAUTH/.test(text))
    return `Redis at ${at} requires a password and none was given (NOAUTH): add it to the connection options`;
  if (/DB index is out of range/i.test(text))
    return `Redis at ${at} rejected the database index (${text}): use a db between 0 and the server's "databases" setting - 1`;
  if (isTlsError(code, text))
    return `TLS to Redis at ${at} failed (${code ?? text}): check rediss:// against the server's TLS setup and certificates`;
  return `Redis at ${at} failed (${code === undefined ? text : `${code}: ${text}`})`;
}

/** What a `pg` error means, in a few words. */
export function postgresCause(at: string, database: string | undefined, err: unknown): string {
  const code = errorCode(err);
  const text = errorText(err);
  if (code === 'ECONNREFUSED')
    return `PostgreSQL at ${at} refused the connection (ECONNREFUSED): is it running there, and are host and port right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `the host name of PostgreSQL at ${at} was not found (${code}): check the host in the connection options`;
  if (code === 'ETIMEDOUT')
    return `PostgreSQL at ${at} did not accept the connection in time (ETIMEDOUT): check the network path and firewall`;
  if (code === '28P01' || code === '28000')
    return `PostgreSQL at ${at} rejected the credentials (${code} ${text}): check user and password`;
  if (code === '3D000')
    return `PostgreSQL at ${at} has no database${database === undefined ? '' : ` "${database}"`} (3D000): create it or fix the database name`;
  if (code === '42501') return `PostgreSQL at ${at} denied a permission the lock store needs (42501 ${text})`;
  if (isTlsError(code, text))
    return `TLS to PostgreSQL at ${at} failed (${code ?? text}): check the ssl options against the server`;
  return `PostgreSQL at ${at} failed (${code === undefined ? text : `${code}: ${text}`})`;
}

export const noAnswerDetail = (store: string, ms: number, lastCause: string | undefined): string =>
  lastCause === undefined ? `${store} did not answer within ${ms} ms` : `${lastCause} (no answer within ${ms} ms)`;

export const lockTableMissingHint = (tableName: string): string =>
  ` (create the lock tables with PostgresLockProvider.schemaSql(${JSON.stringify(tableName)}) in a migration, or set createTable: true)`;

export const lockTableNotCreatableHint = (tableName: string): string =>
  ` (the lock tables for ${JSON.stringify(tableName)} do not exist and this role may not create them: ` +
  'grant it CREATE on the schema, or create them with PostgresLockProvider.schemaSql() in a migration and set createTable: false)';

export const lockTableOutdatedHint = (tableName: string): string =>
  ` (the lock table ${JSON.stringify(tableName)} was created by an older version and lacks a column: ` +
  'run PostgresLockProvider.schemaSql() again in a migration (it only adds what is missing), or set createTable: true)';

export const providerClosedDetail = (store: string): string =>
  `the ${store} lock provider is closed (application shutdown, or close() was called); a closed provider does not reopen: build a new one`;

/** Operations a store error names besides `acquire`, `release`, ...: "Lock store failed during the boot check". */
export const storeOperations = {
  bootCheck: 'the boot check',
  evictionCheck: 'the eviction check',
  /** The `INFO memory` call of the eviction check. */
  evictionInfo: 'eviction check',
  /** The step of an acquire that subscribes a process to its hand-off notices (Redis). */
  subscribeHandOff: 'subscribing to hand-off notices',
};

/** Causes a store's own code raises, worded as a client's error would be. */
export const storeCauses = {
  providerClosed: 'the provider is closed',
  connectionClosed: 'the connection was closed',
  unknownError: 'unknown error',
  timedOut: 'timed out',
};

/** A store at an address, as a message names it: `Redis at 127.0.0.1:6379`. */
export const storeAt = (store: string, at: string): string => `${store} at ${at}`;

/** With `waitForReplicas`: a grant handed to a waiter was gone before replicas confirmed it. */
export const replicaGrantGoneDetail = (key: string): string =>
  `the lock handed to this waiter was gone from Redis before replicas confirmed it (key "${key}")`;

/** With `waitForReplicas`: too few replicas confirmed a grant in time. */
export const replicasShortDetail = (acked: number, need: number, waitMs: number, key: string): string =>
  `only ${acked} of ${need} replicas acknowledged the grant within ${waitMs} ms (waitForReplicas); the lock was given back (key "${key}")`;

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length > 0 ? code : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function isTlsError(code: string | undefined, text: string): boolean {
  return (
    (code !== undefined && /^ERR_TLS|^ERR_SSL|^CERT_|^UNABLE_TO_|^DEPTH_ZERO|^SELF_SIGNED|^EPROTO$/.test(code)) ||
    /\b(SSL|TLS)\b|wrong version number|certificate/i.test(text)
  );
}
