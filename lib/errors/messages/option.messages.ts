/** Bad options and lock names (LockOptionsError), and how values read in them. @internal */

/** How a value reads in a message: `"abc"`, `42`, `null`, `an object`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** How a value given in place of a client reads: `an instance of Map`, `a Promise`, else as {@link describeValue}. */
export function describeInstance(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return describeValue(value);
  if (typeof (value as { then?: unknown }).then === 'function') return 'a Promise (await the client, then pass it)';
  let name: unknown;
  try {
    name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  } catch {
    // a proxy or a getter that throws: no name
  }
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an instance of an anonymous class';
}

export const optionMessage = (where: string, option: string, expected: string, value: unknown): string =>
  `${where}: ${option} must be ${expected}, got ${describeValue(value)}.`;

export const unknownOptionMessage = (where: string, key: string, known: Iterable<string>): string =>
  `${where}: unknown option "${key}"; use one of: ${[...known].join(', ')}.`;

export const oneStoreMessage = (where: string, given: string[]): string =>
  `${where}: give only one of provider, redis, postgres, mysql; got ${given.join(' and ')}.`;

export const lockNameMessage = (where: string, value: unknown): string =>
  `${where}: a lock name must be a non-empty string, got ${value === '' ? '""' : describeValue(value)}.`;

export const objectInNameMessage = (where: string, name: string): string =>
  `${where}: the lock name ${JSON.stringify(name)} contains a stringified object ("[object ...]"), so every call would share one lock. ` +
  'Build the name from a field of the argument (e.g. `order:${dto.id}`), not from the object itself.';

export const connectionUrlMessage = (where: string, problem: string): string => `${where}: ${problem}.`;

export const peerMissingMessage = (provider: string, pkg: string, cause: string): string =>
  `${provider} needs the "${pkg}" package (an optional peer dependency), which could not be loaded (${cause}): npm install ${pkg}`;

export const tableNameMessage = (where: string, value: unknown, maxTable: number): string =>
  `${where}: tableName must be an identifier or schema.identifier (letters, digits, _; not starting with a digit; ` +
  `at most 63 characters, and the table part at most ${maxTable}), got ${describeValue(value)}.`;

export const keyTooLongMessage = (key: string, bytes: number, max: number): string =>
  `PostgresLockProvider: the lock key "${key.slice(0, 40)}..." is ${bytes} bytes long; PostgreSQL locks take keys of at most ${max} bytes. ` +
  'Use a shorter lock name (e.g. a hash of the long part).';

export const redisOnlyOptionMessage = (where: string, option: string): string =>
  `${where}: ${option} applies to the Redis store built from the redis option; with a provider of your own, pass it to new RedisLockProvider({ ${option} }).`;

/** `got`: the value as the caller words it. */
export const waitForReplicasMessage = (where: string, got: string): string =>
  `${where}: waitForReplicas must be a whole number of replicas >= 0, got ${got}.`;

export const waitForReplicasClusterMessage = (): string =>
  'RedisLockProvider: waitForReplicas works with a standalone or Sentinel-managed Redis, not a Cluster client (WAIT must reach the master of each key).';

const REDIS_ACCEPTED =
  'a redis:// or rediss:// URL, a plain object of ioredis options (such as { host, port, db } or { sentinels, name }), ' +
  'an ioredis or iovalkey Redis or Cluster instance, or a node-redis client (createClient(), createCluster() or createSentinel())';

export const redisConnectionTypeMessage = (where: string, value: unknown, method?: string): string =>
  `${where}: redis must be ${REDIS_ACCEPTED}; got ${method === undefined ? describeInstance(value) : `an object with a ${method}() method`}. ` +
  'Other objects are refused, not read as options (ioredis would connect to 127.0.0.1:6379 instead); ' +
  'for options kept in a class instance, pass a plain copy ({ ...options }).';

export const nodeRedisClientMessage = (where: string, className: string): string =>
  `${where}: redis is a node-redis ${className} (the "redis" package), which the Redis store does not take ` +
  '(read as ioredis options, it would connect to 127.0.0.1:6379 instead). ' +
  `Pass ${REDIS_ACCEPTED}: e.g. a createClient() client instead of a pool.`;

export const redisForeignOptionMessage = (where: string, key: string, instead: string): string =>
  `${where}: redis.${key} is not an ioredis option: ioredis would ignore it and connect to 127.0.0.1:6379 instead. Pass ${instead}.`;

export const providerOptionsMessage = (provider: string, example: string): string =>
  `${provider}: options must be an object such as ${example}.`;

export const limitMismatchMessage = (key: string, recorded: number, requested: number): string =>
  `Lock "${key}": requested with limit ${requested}, but the store holds or queues it with limit ${recorded}. ` +
  'Give every caller of this name the same limit.';

const DURATION_RANGE = 'at most 2147483647 (2^31 − 1 ms, about 24.8 days)';

/** `lower`: the lower bound as it reads, e.g. `> 0`, `>= 60000`. */
export const durationMessage = (where: string, option: string, lower: string, value: unknown): string =>
  optionMessage(where, option, `a finite number of milliseconds ${lower} and ${DURATION_RANGE}`, value);

/** A long name or prefix reads as its first 40 characters. */
const shortText = (text: string): string =>
  text.length > 40 ? `${JSON.stringify(text.slice(0, 40))}... (${text.length} characters)` : JSON.stringify(text);

export const nameTooLongMessage = (where: string, what: string, text: string, max: number): string =>
  `${where}: a ${what} must be at most ${max} characters (UTF-16 code units, as String.length counts them), got ${shortText(text)}. ` +
  'Use a shorter name (e.g. a hash of the long part).';

export const nameCharacterMessage = (where: string, what: string, text: string, index: number, code: number): string =>
  `${where}: the ${what} ${shortText(text)} holds ${code >= 0xd800 && code <= 0xdfff ? 'a lone surrogate' : 'a control character'} ` +
  `U+${code.toString(16).toUpperCase().padStart(4, '0')} at index ${index}; a ${what} may hold any Unicode text except control characters ` +
  '(U+0000-U+001F, U+007F-U+009F) and lone surrogates (half of a UTF-16 pair, which no store can keep).';
