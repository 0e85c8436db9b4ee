import type { HandOffRequest } from './hand-off-grant.js';
import type { LockAcquireRequest } from '../contract/lock-provider.js';

/**
 * What the store is asked for a call. A plain lock: the contract's fields,
 * `renews`, and `fences` when given (a waiter's grant reserves tokens for
 * the callers of this process that queue behind it). A semaphore or a shared
 * lock: `limit` only above 1, `mode` only when shared, never `fences`. @internal
 */
export function storeRequest(req: HandOffRequest, fences: number | undefined): LockAcquireRequest {
  const o = req.options;
  if (o.limit === undefined && o.mode === undefined) {
    return {
      key: req.key,
      owner: req.owner,
      ttl: o.ttl,
      wait: req.wait,
      waitTimeout: o.waitTimeout,
      signal: o.signal,
      fences,
      renews: o.renew,
    };
  }
  const request: { -readonly [K in keyof LockAcquireRequest]: LockAcquireRequest[K] } = {
    key: req.key,
    owner: req.owner,
    ttl: o.ttl,
    wait: req.wait,
    waitTimeout: o.waitTimeout,
    signal: o.signal,
    renews: o.renew,
  };
  if (o.limit !== undefined) request.limit = o.limit;
  if (o.mode !== undefined) request.mode = o.mode;
  return request;
}
