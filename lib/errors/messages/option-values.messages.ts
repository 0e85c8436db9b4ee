/**
 * The words inside option messages: what a value must be (the middle of
 * `optionMessage`: "ttl must be <expected>, got ..."), what a checked text
 * is called, and where a value came from. @internal
 */

/** What a value must be. */
export const expected = {
  object: 'an object',
  boolean: 'true or false',
  string: 'a string',
  nonEmptyString: 'a non-empty string',
  function: 'a function',
  abortSignal: 'an AbortSignal',
  integerFrom1: 'an integer >= 1',
  integerFrom1To: (max: number): string => `an integer from 1 to ${max}`,
  onHeld: "one of 'throw', 'skip', 'wait'",
  mode: "'shared' or 'exclusive'",
  /** `verifyOnBoot`, `evictionCheck`. */
  warnFailOrFalse: "'warn', 'fail' or false",
  provider: 'an instance of a LockProvider subclass',
  leaderOptions: 'an object such as { ttl: 15000 }',
  jobDelay: 'a duration in ms (0 or more) or a function of the job',
  dashboardPath: "a non-empty route such as '/locks'",
  inspectCursor: 'the string a previous page returned',
  holdLimitWithShared: "absent with mode 'shared'",
  holdLimit: (permits: number): string => `an integer >= permits (${permits})`,
  redisDb: 'an integer >= 0 (the Redis database index)',
  host: 'a non-empty host name or address',
  port: 'a port number from 1 to 65535',
  logger: 'a logger with debug, warn and error methods (Nest Logger, console)',
  postgresConnection: 'a pg.Pool, a connection string or a pg PoolConfig',
  prune: 'true, false or { olderThanMs?, everyMs? }',
  pruneEvery: 'a number of milliseconds from 1000 to 86400000',
  telemetry: "true, false, 'auto' or an options object",
  meterProvider: 'an OpenTelemetry MeterProvider (with getMeter())',
  tracerProvider: 'an OpenTelemetry TracerProvider (with getTracer())',
};

/** What a checked text or value is called in its message, and where it came from. */
export const optionPlaces = {
  moduleOptions: 'LockModule options',
  lockName: 'lock name',
  leaderName: 'leader name',
  /** A leader name, as the option `optionMessage` names. */
  aLeaderName: 'a leader name',
  nameFunction: (where: string): string => `${where} (name function)`,
  extend: (name: string): string => `extend(ms) of lock "${name}"`,
  redisPort: (where: string): string => `${where}: the redis port`,
};

/** A provider's options, as the example its message gives. */
export const providerOptionsExamples = {
  redis: '{ redis: "redis://127.0.0.1:6379" }',
  postgres: '{ connection: "postgres://user@host/db" }',
  mysql: '{ connection: "mysql://user@host/db" }',
};

/**
 * Options of an ioredis `Cluster` or of node-redis that ioredis' `Redis` does not read: options
 * with them would connect to 127.0.0.1:6379. Each with what to pass instead.
 */
export const redisForeignOptions: Readonly<Record<string, string>> = {
  nodes: 'an ioredis Cluster instance (new Cluster(nodes, options)): a Cluster is not built from options',
  startupNodes: 'an ioredis Cluster instance (new Cluster(startupNodes, options)): a Cluster is not built from options',
  rootNodes: 'an ioredis Cluster instance (new Cluster(nodes, options)) instead of node-redis createCluster() options',
  url: 'the URL itself as redis (a string), or host, port and db as ioredis options',
  socket: 'host, port (and tls) at the top level of ioredis options, or a redis:// URL',
  database: 'db, the ioredis name of the database index',
};

/** What is wrong with a connection URL: the problem `connectionUrlMessage` words. */
export const connectionUrlProblems = {
  redisScheme: (scheme: string, host: string): string =>
    `the redis URL has the scheme "${scheme}" (host ${host}); use redis:// (or rediss:// for TLS)`,
  redisDatabase: (db: string, host: string): string =>
    `the redis URL's database "/${db}" (host ${host}) is not an integer; use /0, /1, ... or leave it out`,
  postgresScheme: (scheme: string, host: string): string =>
    `the postgres URL has the scheme "${scheme}" (host ${host}); use postgres:// or postgresql://`,
  mysqlScheme: (scheme: string, host: string): string =>
    `the mysql URL has the scheme "${scheme}" (host ${host}); use mysql://`,
  notAUrl: (shape: string): string => `the connection string is not a URL of the shape ${shape}`,
  port: (store: string, port: string, host: string): string =>
    `the ${store} URL's port "${port}" (host ${host}) is not a port number from 1 to 65535`,
};
