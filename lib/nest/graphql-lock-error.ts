import type { LockErrorPayload } from './lock-error-payload.js';

/**
 * The error a GraphQL resolver returns for a lock error: graphql-js copies an
 * error's `extensions` into the GraphQL error it reports (Apollo and
 * Mercurius both), so no import of `graphql` is needed. `extensions.code` is
 * the reason in upper snake case (`CONFLICT`, `SERVICE_UNAVAILABLE`). Its
 * stack is its first line only: Apollo shows an error's stack to clients
 * outside production. @internal
 */
export class LockGraphQLError extends Error {
  readonly extensions: { code: string; status: number; lock: string | undefined };

  constructor(payload: LockErrorPayload) {
    super(payload.message);
    this.name = 'LockGraphQLError';
    this.extensions = {
      code: payload.error.toUpperCase().replace(/\W+/g, '_'),
      status: payload.status,
      lock: payload.lock,
    };
    this.stack = `${this.name}: ${this.message}`;
  }
}
