import { LockOptionsError } from '../errors/lock.errors.js';
import { peerMissingMessage } from '../errors/lock.messages.js';
import { requirePeer } from '../shared/require-peer.cjs';

const loaded = new Map<string, unknown>();

/**
 * Loads an optional peer package (`ioredis`, `pg`) on first use, so importing the
 * library needs neither unless that store is used. A missing package throws a
 * `LockOptionsError` that names the store and the install command.
 * @internal
 */
export function loadOptionalPeer<T>(pkg: string, store: string): T {
  if (!loaded.has(pkg)) {
    try {
      loaded.set(pkg, requirePeer<T>(pkg));
    } catch (err) {
      throw new LockOptionsError(peerMissingMessage(store, pkg, err instanceof Error ? err.message : String(err)), { cause: err });
    }
  }
  return loaded.get(pkg) as T;
}
