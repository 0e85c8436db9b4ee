/** Default lease of a lock, in ms: renewed while the holder runs. */
export const DEFAULT_TTL = 30_000;
/** Default prefix of every lock's key in the store. */
export const DEFAULT_KEY_PREFIX = 'lock:';
/** Default bound on one store call (Redis or PostgreSQL), in ms: past it the call fails with `LockStoreError`. */
export const DEFAULT_COMMAND_TIMEOUT = 2_000;
/**
 * The longest duration any option takes, in ms: 2^31 − 1 (about 24.8 days),
 * the longest delay a Node timer takes. Applies to `ttl`, `waitTimeout`,
 * `maxHold`, `holdAtLeast`, `extend(ms)`, the leader's and the stores' options.
 */
export const MAX_DURATION_MS = 2_147_483_647;
/**
 * The longest lock (or leader) name, in UTF-16 code units (`name.length`):
 * at most 1,536 bytes in UTF-8, so that with the key prefix it fits every store.
 */
export const MAX_LOCK_NAME_LENGTH = 512;
/** The longest `keyPrefix`, in UTF-16 code units (`keyPrefix.length`). */
export const MAX_KEY_PREFIX_LENGTH = 128;
