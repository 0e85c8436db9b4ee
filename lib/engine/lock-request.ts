import type { LockScope } from './lock-context.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';
import type { HandOffRequest } from '../hand-off/hand-off-grant.js';

/** One call's request for a lock: what the hand-off serves, and the scope the new lock joins. @internal */
export interface LockRequest extends HandOffRequest {
  readonly options: ResolvedCallOptions;
  /** The lock scope the call runs in (a scoped call), as the new lock's parent. */
  readonly scope: LockScope | undefined;
}
