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

export const optionMessage = (where: string, option: string, expected: string, value: unknown): string =>
  `${where}: ${option} must be ${expected}, got ${describeValue(value)}.`;

export const unknownOptionMessage = (where: string, key: string, known: Iterable<string>): string =>
  `${where}: unknown option "${key}"; use one of: ${[...known].join(', ')}.`;

export const oneStoreMessage = (where: string, given: string[]): string => `${where}: give only one of provider, redis, postgres; got ${given.join(' and ')}.`;

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

export const redisConnectionTypeMessage = (value: unknown): string =>
  `RedisLockProvider: redis must be a URL string, ioredis options, or an ioredis Redis or Cluster instance, got ${describeValue(value)}.`;

export const providerOptionsMessage = (provider: string, example: string): string => `${provider}: options must be an object such as ${example}.`;

export const limitMismatchMessage = (key: string, recorded: number, requested: number): string =>
  `Lock "${key}": requested with limit ${requested}, but the store holds or queues it with limit ${recorded}. ` +
  'Give every caller of this name the same limit.';
