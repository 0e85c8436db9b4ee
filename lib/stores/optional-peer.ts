import { LockOptionsError } from '../errors/lock.errors.js';
import { peerMissingMessage } from '../errors/lock.messages.js';
import { requirePeer } from '../shared/require-peer.cjs';

/**
 * Loads an optional peer package (`ioredis`, `pg`) on first use, so importing the
 * library needs neither unless that store is used. A missing package throws a
 * `LockOptionsError` that names the store and the install command. (Node's
 * `require` keeps what it loaded: a second call costs a cache lookup.)
 * @internal
 */
export function loadOptionalPeer<T>(pkg: string, store: string): T {
  try {
    return requirePeer<T>(pkg);
  } catch (err) {
    throw new LockOptionsError(peerMissingMessage(store, pkg, err instanceof Error ? err.message : String(err)), {
      cause: err,
    });
  }
}
