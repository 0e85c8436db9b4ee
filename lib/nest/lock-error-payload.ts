import type { LockAcquireError, LockStoreError } from '../errors/lock.errors.js';
import { reasonPhrase } from '../errors/lock.messages.js';

/**
 * What {@link LockExceptionFilter} tells a caller outside HTTP: a microservice
 * client's observable errors with it, a WebSocket client gets it as an
 * `exception` event (and as its ack), and GraphQL puts `status` and `lock` in
 * the error's `extensions`.
 */
export interface LockErrorPayload {
  /** The HTTP-equivalent status: `409` for a held lock, `503` for a failed store (or the filter's options). */
  status: number;
  /** The status's reason phrase: `Conflict`, `Service Unavailable`, ... */
  error: string;
  message: string;
  /** The lock's name. */
  lock: string | undefined;
}

/** The payload of an answer with `status` and `message` to a caller of `exception`'s lock. @internal */
export function lockErrorPayload(
  exception: LockAcquireError | LockStoreError,
  status: number,
  message: string,
): LockErrorPayload {
  return { status, error: reasonPhrase(status), message, lock: exception.lockName };
}
