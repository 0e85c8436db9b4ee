import type { LockRequest } from './lock-request.js';
import type { LockScope } from './lock-context.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';
import { assertSupported } from './lock-options.validation.js';
import type { LockProvider } from '../contract/lock-provider.js';
import { ownerTokenFor, type InstanceOwnerTokens } from '../shared/owner-token.js';
import { now } from '../shared/clock.js';

/** Makes the requests of one manager's calls: store key, owner token, wait or try. @internal */
export class LockRequests {
  /** The last name of {@link keyOf} and its key. */
  private last: string | undefined;
  private lastKey = '';

  constructor(
    private readonly provider: LockProvider,
    private readonly keyPrefix: string,
    /** Owner tokens that name the manager's `instanceId`. */
    private readonly namedTokens: InstanceOwnerTokens,
  ) {}

  /** The name of the last request (a name already checked). */
  get lastName(): string | undefined {
    return this.last;
  }

  /** The request for `name` (checks that the store supports its `limit`/`mode`). */
  make(name: string, options: ResolvedCallOptions, scope: LockScope | undefined): LockRequest {
    if (options.limit !== undefined || options.mode !== undefined) assertSupported(this.provider, name, options);
    return {
      name,
      key: this.keyOf(name),
      owner: this.ownerFor(options),
      options,
      wait: options.onHeld === 'wait',
      scope,
      requestedAt: now(),
    };
  }

  /** A new owner token for a request: naming its `instanceId` when it has one, else the manager's. */
  private ownerFor(o: ResolvedCallOptions): string {
    return o.instanceId !== undefined ? ownerTokenFor(o.instanceId) : this.namedTokens.next();
  }

  /**
   * The store key of `name`. The last one is kept: a name locked over and
   * over (the usual hot lock) reuses one flat string, which the store's maps
   * have hashed already, instead of a new concatenation per call.
   */
  private keyOf(name: string): string {
    if (name !== this.last) {
      this.last = name;
      this.lastKey = this.keyPrefix + name;
    }
    return this.lastKey;
  }
}
