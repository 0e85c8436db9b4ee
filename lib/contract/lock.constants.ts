/** Default lease of a lock, in ms: renewed while the holder runs. */
export const DEFAULT_TTL = 30_000;
/** Default prefix of every lock's key in the store. */
export const DEFAULT_KEY_PREFIX = 'lock:';
/** Default bound on one store call (Redis or PostgreSQL), in ms: past it the call fails with `LockStoreError`. */
export const DEFAULT_COMMAND_TIMEOUT = 2_000;
