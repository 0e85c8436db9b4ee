/** Semaphores (`limit`), read/write locks (`mode`) and several names at once: wrong uses, each with the fix. @internal */

export const limitWithSharedMessage = (where: string, limit: unknown): string =>
  `${where}: limit (${String(limit)}) cannot go with mode: 'shared': shared holders are unlimited and admit no writer. ` +
  "Leave out limit for a read lock, or leave out mode: 'shared' for a semaphore of that many exclusive holders.";

export const unsupportedLimitMessage = (name: string, kind: string, limit: number): string =>
  `Lock "${name}": the "${kind}" store cannot take limit: ${limit} (a semaphore; its LockProvider.supports lacks limit). ` +
  'Use a store that supports it (the built-in memory, Redis and PostgreSQL stores do), or leave out limit for a plain lock.';

export const unsupportedSharedMessage = (name: string, kind: string): string =>
  `Lock "${name}": the "${kind}" store cannot take mode: 'shared' (a read lock; its LockProvider.supports lacks shared). ` +
  "Use a store that supports it (the built-in memory, Redis and PostgreSQL stores do), or leave out mode: 'shared' for a plain exclusive lock.";

export const emptyNamesMessage = (where: string): string =>
  `${where}: the list of lock names is empty, so there is nothing to lock. Give at least one name (or a single string).`;
