/**
 * Deliberately broken stores, each with one fault a store author could make,
 * for the conformance kit to catch (test/testing/broken-stores.spec.ts). Each
 * is the in-memory store with one method changed.
 */
import { InMemoryLockProvider, type LockAcquireRequest, type LockGrant } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

/** Waits, without queueing at the store, until `request` ends by its waitTimeout or signal (at most 30 s). */
async function waitOut(
  request: LockAcquireRequest,
  poll?: () => LockGrant | null | Promise<LockGrant | null>,
): Promise<LockGrant | null> {
  const end = Date.now() + (request.waitTimeout ?? 30_000);
  while (Date.now() < end && !request.signal?.aborted) {
    const g = await poll?.();
    if (g) return g;
    await sleep(25);
  }
  return null;
}

/** release() frees the lock whoever asks. */
export class ReleaseWithoutOwnerCheck extends InMemoryLockProvider {
  override async release(key: string, owner: string): Promise<boolean> {
    const holder = await this.holder(key);
    return super.release(key, holder?.owner ?? owner);
  }
}

/** Every grant gets fencing token 1. */
export class RepeatingTokens extends InMemoryLockProvider {
  override acquire(request: LockAcquireRequest): LockGrant | null | Promise<LockGrant | null> {
    const g = super.acquire(request);
    const one = (grant: LockGrant | null) => grant && { ...grant, fencingToken: 1 };
    return g instanceof Promise ? g.then(one) : one(g);
  }
}

/** Leases last an hour, whatever ttl is asked. */
export class EndlessLease extends InMemoryLockProvider {
  override acquire(request: LockAcquireRequest): LockGrant | null | Promise<LockGrant | null> {
    return super.acquire({ ...request, ttl: 3_600_000 });
  }
  override extend(key: string, owner: string): boolean | Promise<boolean> {
    return super.extend(key, owner, 3_600_000);
  }
}

/** A waiter is never granted: it waits out its waitTimeout (or signal) and gets null. */
export class WaiterNeverWoken extends InMemoryLockProvider {
  override acquire(request: LockAcquireRequest): LockGrant | null | Promise<LockGrant | null> {
    const g = super.acquire({ ...request, wait: false });
    if (!request.wait || (g && !(g instanceof Promise))) return g;
    return waitOut(request);
  }
}

/** A waiter polls instead of queueing: a try right after a release takes the key before it. */
export class TryOvertakesWaiter extends InMemoryLockProvider {
  override acquire(request: LockAcquireRequest): LockGrant | null | Promise<LockGrant | null> {
    const tryOnce = () => super.acquire({ ...request, wait: false });
    const g = tryOnce();
    if (!request.wait || (g && !(g instanceof Promise))) return g;
    return waitOut(request, tryOnce);
  }
}
