/**
 * The text of every error and log line the library shows, in one place: each
 * says what happened, to which lock or option, the cause the client saw, and
 * what to do. Throw sites and loggers call these; the error classes live in
 * `lock.errors.ts`. No Nest import (the engine uses it). @internal
 */

// ---------------------------------------------------------------- lock outcomes

export const heldMessage = (name: string): string =>
  `Lock "${name}" is held by another caller. Retry later, or use onHeld: 'wait' to queue for it.`;

export const waitTimeoutMessage = (name: string, waitedMs: number): string =>
  `Timed out after ${waitedMs} ms waiting for lock "${name}", which is still held by another caller. Raise waitTimeout or retry later.`;

export const storeFailedMessage = (operation: string, lockName: string | undefined, detail: string): string =>
  `Lock store failed during ${operation}${lockName === undefined ? '' : ` of lock "${lockName}"`}: ${detail}. ` +
  'The lock state is unknown; check that the store is reachable and its connection options are right.';

export const lostMessage = (name: string, detail: string): string =>
  `Lock "${name}" was lost: ${detail}. Work protected by it is no longer exclusive; stop it, and check fencing tokens on writes.`;

export const reentryMessage = (name: string): string =>
  `Lock "${name}" is already held by this call chain; taking it again would wait on itself. ` +
  'Pass reentrant: true to run the inner call under the outer lock, or use a different name.';

export const closedWhileWaitingMessage = (name: string): string =>
  `Lock "${name}": the lock manager closed (application shutdown) while this call waited for it. Nothing ran; no action needed during shutdown.`;

export const requestedAfterCloseMessage = (name: string): string =>
  `Lock "${name}" was requested after the lock manager closed (application shutdown). Stop scheduling work before the app closes.`;

export const grantedAfterCloseMessage = (name: string): string =>
  `Lock "${name}" was granted after the lock manager closed (application shutdown); it was released again and nothing ran.`;

export const holdConflictMessage = (name: string, key: string): string =>
  `InMemoryLockProvider.hold("${name}"): the lock (key "${key}") is already held, by the app or by an earlier hold() not released yet; ` +
  'release it first, or call reset() between tests.';

// ---------------------------------------------------------------- log lines

export const heldSkippedLog = (name: string): string =>
  `Lock "${name}" is held elsewhere; skipped the call (onHeld: 'skip'). Further ones are counted and reported once a minute.`;

export const heldThrownLog = (name: string): string =>
  `Lock "${name}" is held elsewhere; the call failed with LockAcquireError (onHeld: 'throw'). Further ones are counted and reported once a minute.`;

export const heldSummaryLog = (name: string, outcome: 'skipped' | 'refused', count: number, seconds: number): string =>
  `${outcome} ${count} more call${count === 1 ? '' : 's'} of lock "${name}" in the last ${seconds} s: it was held elsewhere.`;

export const storeFailuresSummaryLog = (cause: string, count: number, seconds: number): string =>
  `The lock store failed ${count} more time${count === 1 ? '' : 's'} in the last ${seconds} s with the same cause (logged once per interval): ${cause}`;

export const releaseFailedLog = (name: string, cause: string): string =>
  `Releasing lock "${name}" failed; its lease will expire on its own: ${cause}`;

export const renewFailedLog = (name: string, cause: string): string =>
  `Renewing lock "${name}" failed (${cause}); retrying until its lease ends.`;

export const onEventThrewLog = (type: string, name: string, cause: string): string =>
  `onEvent threw for a "${type}" event of lock "${name}" (ignored; onEvent must not throw): ${cause}`;

export const scheduledFailOpenLog = (name: string, cause: string): string =>
  `Lock store failed for scheduled task "${name}"; running the tick without the lock (failOpen): ${cause}`;

export const scheduledSkippedLog = (name: string, cause: string): string =>
  `Lock store failed for scheduled task "${name}"; skipped this tick: ${cause}`;

export const scheduledShutdownLog = (name: string): string => `Scheduled task "${name}" skipped: the application is shutting down.`;

export const inMemoryInProductionLog = (): string =>
  'LockModule uses the in-memory provider with NODE_ENV=production: locks exclude callers of this process only, ' +
  'not other instances. Configure LockModule.forRoot({ redis }) or ({ postgres }) for several instances.';

export const bootCheckFailedLog = (cause: string): string =>
  `The lock store does not work: ${cause}. Locks will fail with LockStoreError until it does ` +
  "(verifyOnBoot: 'fail' stops the boot instead; false skips this check).";

export const bootCheckFailedDetail = (cause: string): string =>
  `${cause} (the boot stops because LockModule has verifyOnBoot: 'fail'; 'warn' boots anyway and logs this)`;

// ---------------------------------------------------------------- store causes

/** Where a store is, for messages: `host:port`, never a password. */
export const endpointOf = (host: string | undefined, port: number | string | undefined): string =>
  host === undefined ? 'an unknown address' : port === undefined || port === '' ? host : `${host}:${port}`;

/** What a Redis client error means, in a few words: "Redis at 127.0.0.1:6380 refused the connection (ECONNREFUSED)". */
export function redisCause(at: string, err: unknown, tls = false): string {
  const code = errorCode(err);
  const text = errorText(err);
  if (code === 'ECONNREFUSED') return `Redis at ${at} refused the connection (ECONNREFUSED): is Redis running there, and are host and port right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name of Redis at ${at} was not found (${code}): check the host in the connection options`;
  if (code === 'ETIMEDOUT' && tls) {
    return `Redis at ${at} did not complete the TLS connection in time (ETIMEDOUT): check that the server speaks TLS on that port (rediss://), or use redis:// if it does not`;
  }
  if (code === 'ETIMEDOUT') return `Redis at ${at} did not accept the connection in time (ETIMEDOUT): check the network path and firewall`;
  if (code === 'ECONNRESET' || code === 'EPIPE') return `Redis at ${at} closed the connection (${code})`;
  if (/^WRONGPASS/.test(text)) return `Redis at ${at} rejected the user name or password (WRONGPASS): check the credentials in the connection options`;
  if (/^NOAUTH/.test(text)) return `Redis at ${at} requires a password and none was given (NOAUTH): add it to the connection options`;
  if (/DB index is out of range/i.test(text)) return `Redis at ${at} rejected the database index (${text}): use a db between 0 and the server's "databases" setting - 1`;
  if (isTlsError(code, text)) return `TLS to Redis at ${at} failed (${code ?? text}): check rediss:// against the server's TLS setup and certificates`;
  return `Redis at ${at} failed (${code === undefined ? text : `${code}: ${text}`})`;
}

/** What a `pg` error means, in a few words. */
export function postgresCause(at: string, database: string | undefined, err: unknown): string {
  const code = errorCode(err);
  const text = errorText(err);
  if (code === 'ECONNREFUSED') return `PostgreSQL at ${at} refused the connection (ECONNREFUSED): is it running there, and are host and port right?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name of PostgreSQL at ${at} was not found (${code}): check the host in the connection options`;
  if (code === 'ETIMEDOUT') return `PostgreSQL at ${at} did not accept the connection in time (ETIMEDOUT): check the network path and firewall`;
  if (code === '28P01' || code === '28000') return `PostgreSQL at ${at} rejected the credentials (${code} ${text}): check user and password`;
  if (code === '3D000') return `PostgreSQL at ${at} has no database${database === undefined ? '' : ` "${database}"`} (3D000): create it or fix the database name`;
  if (code === '42501') return `PostgreSQL at ${at} denied a permission the lock store needs (42501 ${text})`;
  if (isTlsError(code, text)) return `TLS to PostgreSQL at ${at} failed (${code ?? text}): check the ssl options against the server`;
  return `PostgreSQL at ${at} failed (${code === undefined ? text : `${code}: ${text}`})`;
}

export const noAnswerDetail = (store: string, ms: number, lastCause: string | undefined): string =>
  lastCause === undefined ? `${store} did not answer within ${ms} ms` : `${lastCause} (no answer within ${ms} ms)`;

export const lockTableMissingHint = (tableName: string): string =>
  ` (create the lock tables with PostgresLockProvider.schemaSql(${JSON.stringify(tableName)}) in a migration, or set createTable: true)`;

export const lockTableNotCreatableHint = (tableName: string): string =>
  ` (the lock tables for ${JSON.stringify(tableName)} do not exist and this role may not create them: ` +
  'grant it CREATE on the schema, or create them with PostgresLockProvider.schemaSql() in a migration and set createTable: false)';

// ---------------------------------------------------------------- options

/** How a value reads in a message: `"abc"`, `42`, `null`, `an object`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

export const optionMessage = (where: string, option: string, expected: string, value: unknown): string =>
  `${where}: ${option} must be ${expected}, got ${describeValue(value)}.`;

export const unknownOptionMessage = (where: string, key: string, known: Iterable<string>): string =>
  `${where}: unknown option "${key}"; use one of: ${[...known].join(', ')}.`;

export const oneStoreMessage = (where: string, given: string[]): string =>
  `${where}: give only one of provider, redis, postgres; got ${given.join(' and ')}.`;

export const lockNameMessage = (where: string, value: unknown): string =>
  `${where}: a lock name must be a non-empty string, got ${value === '' ? '""' : describeValue(value)}.`;

export const objectInNameMessage = (where: string, name: string): string =>
  `${where}: the lock name ${JSON.stringify(name)} contains a stringified object ("[object ...]"), so every call would share one lock. ` +
  'Build the name from a field of the argument (e.g. `order:${dto.id}`), not from the object itself.';

export const suspiciousNameLog = (where: string, name: string, segment: string): string =>
  `${where}: the lock name ${JSON.stringify(name)} has a "${segment}" segment: likely a missing argument or field, ` +
  'so unrelated calls share this lock. Fix the name function (warned once per method).';

export const nameFunctionThrewMessage = (where: string, cause: string): string =>
  `${where}: the lock name function threw: ${cause}. Make it return a string for every argument the method gets.`;

export const missingModuleKey = (className: string, method: string): string =>
  `LockService, for @Locked on ${className}.${method}: import LockModule.forRoot() (or LockModule.forRootAsync()) in the app's root module`;

export const noLockServiceMessage = (where: string): string =>
  `${where}: no LockService on this instance. @Locked methods must belong to a class Nest creates (a provider or controller) ` +
  'in an app that imports LockModule.forRoot() (or forRootAsync()); in plain code, use LockManager.withLock().';

export const notAMethodMessage = (where: string, property: string): string =>
  `${where}: @Locked() decorates methods only; ${property} is not a method. Move it to a method, or use LockService.withLock().`;

export const staticMethodMessage = (where: string): string =>
  `${where}: static methods cannot be locked; Nest injects LockService into instances only. Make it an instance method.`;

export const invalidLockedArgumentsMessage = (got: string, withOptions: boolean): string =>
  `@Locked(): pass a name (string), a name function or an options object, then optional options; got ${got}${withOptions ? ' and options' : ''}.`;

export const connectionUrlMessage = (where: string, problem: string): string => `${where}: ${problem}.`;

export const notAFunctionMessage = (where: string): string =>
  `${where}: the second argument must be a function: pass the work to run under the lock, e.g. withLock('report', () => build()).`;

export const providerClosedDetail = (store: string): string =>
  `the ${store} lock provider is closed (application shutdown, or close() was called); a closed provider does not reopen: build a new one`;

export const peerMissingMessage = (provider: string, pkg: string, cause: string): string =>
  `${provider} needs the "${pkg}" package (an optional peer dependency), which could not be loaded (${cause}): npm install ${pkg}`;

export const tableNameMessage = (where: string, value: unknown, maxTable: number): string =>
  `${where}: tableName must be an identifier or schema.identifier (letters, digits, _; not starting with a digit; ` +
  `at most 63 characters, and the table part at most ${maxTable}), got ${describeValue(value)}.`;

export const keyTooLongMessage = (key: string, bytes: number, max: number): string =>
  `PostgresLockProvider: the lock key "${key.slice(0, 40)}..." is ${bytes} bytes long; PostgreSQL locks take keys of at most ${max} bytes. ` +
  'Use a shorter lock name (e.g. a hash of the long part).';

export const redisConnectionTypeMessage = (value: unknown): string =>
  `RedisLockProvider: redis must be a URL string, ioredis options, or an ioredis Redis or Cluster instance, got ${describeValue(value)}.`;

export const providerOptionsMessage = (provider: string, example: string): string =>
  `${provider}: options must be an object such as ${example}.`;

export const leaderOnlyMessage = (where: string, what: string, fix: string): string => `${where}: ${what}; ${fix}.`;

// ---------------------------------------------------------------- lost leases (the detail of LockLostError)

export const lostDetails = {
  alreadyReleased: 'it was already released',
  releasedMeanwhile: 'it was released meanwhile',
  takenOver: 'the store no longer has it under this owner (it expired or was taken over)',
  maxHold: (ms: number | undefined): string => `maxHold of ${ms} ms reached`,
  renewalUnreachable: (ttl: number): string => `its ${ttl} ms lease ended while renewal could not reach the store`,
  notRenewedInTime: (ttl: number): string => `its ${ttl} ms lease ended before it could be renewed`,
  renewOff: (ttl: number): string => `its ${ttl} ms lease ended (renew is off)`,
};

// ---------------------------------------------------------------- helpers

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
    (code !== undefined && (/^ERR_TLS|^ERR_SSL|^CERT_|^UNABLE_TO_|^DEPTH_ZERO|^SELF_SIGNED|^EPROTO$/.test(code))) ||
    /\b(SSL|TLS)\b|wrong version number|certificate/i.test(text)
  );
}
