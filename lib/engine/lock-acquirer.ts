import { HeldLock, type HeldLockContext } from './held-lock.js';
import type { LockRequest } from './lock-request.js';
import { LockError } from '../errors/lock.errors.js';
import { grantedAfterCloseMessage, requestedAfterCloseMessage } from '../errors/lock.messages.js';
import { allOf, andThen, type MaybePromise } from '../contract/maybe-promise.js';
import type { LocalHandOff } from '../hand-off/local-hand-off.js';
import type { HandOffGrant } from '../hand-off/hand-off-grant.js';
import { now } from '../shared/clock.js';

/** Longest wait of `close()` for tries in flight, in ms. */
const CLOSE_DRAIN_MS = 10_000;

/**
 * Takes locks for one manager: asks the local hand-off (which asks the store,
 * or queues the caller behind a caller of this process, see docs/engine.md)
 * and makes the lock of each grant. @internal
 */
export class LockAcquirer {
  private closed = false;
  /** Tries (no waiting) whose store call is in flight: `close()` lets them finish and release what they got. */
  private tries = 0;
  private drained: (() => void) | undefined;

  constructor(
    private readonly ctx: HeldLockContext,
    private readonly handOff: LocalHandOff,
  ) {}

  /** `true` once {@link close} was called. */
  get closing(): boolean {
    return this.closed;
  }

  /**
   * Takes the lock; `then` maps the lock (or `null`: held) within the same
   * promise turn.
   */
  take<R>(req: LockRequest, then: (lock: HeldLock | null) => MaybePromise<R>): MaybePromise<R> {
    if (this.closed) {
      throw new LockError(requestedAfterCloseMessage(req.name), { lockName: req.name });
    }
    // (one `then` on the store's answer: the hand-off calls on with its grant)
    if (req.wait) return this.handOff.acquire(req, (g) => andThen(this.granted(req, g), then));
    this.tries++;
    return this.handOff.acquire(
      req,
      (g) => (this.triedOne(), andThen(this.granted(req, g), then)),
      (err) => {
        throw (this.triedOne(), err);
      },
    );
  }

  /**
   * Takes the plain locks of `reqs` (the names of one call) in one store call
   * (see {@link LocalHandOff.acquireMany}), each then the lock a single grant
   * makes; `null` when the store could not take them all at once (nothing
   * held), `undefined` when this path does not serve them.
   */
  takeMany(reqs: readonly LockRequest[]): MaybePromise<HeldLock[] | null> | undefined {
    if (this.closed) return undefined;
    const grants = this.handOff.acquireMany(reqs);
    if (grants === undefined) return undefined;
    const locks = (g: HandOffGrant[] | null): MaybePromise<HeldLock[] | null> => {
      if (!g) return null;
      // (closed meanwhile: each lock is being released and its promise rejects)
      return allOf(reqs.map((req, i) => this.granted(req, g[i]) as MaybePromise<HeldLock>));
    };
    this.tries++;
    return andThen(
      grants,
      (g) => (this.triedOne(), locks(g)),
      (err: unknown) => {
        throw (this.triedOne(), err);
      },
    );
  }

  /**
   * Refuses new locks, fails the waiters queued in this process, and waits
   * (bounded) for tries in flight to finish and release what they got.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.handOff.close();
    if (this.tries > 0) {
      // Bounded: the built-in stores answer within their command timeout; a store that never answers must not hang shutdown.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        timer = setTimeout(resolve, CLOSE_DRAIN_MS);
        timer.unref?.();
      });
      clearTimeout(timer);
      this.drained = undefined;
    }
  }

  private triedOne(): void {
    if (--this.tries === 0 && this.drained) {
      // Let the late grant's release (in granted()) start before close() goes on.
      const drained = this.drained;
      this.drained = undefined;
      queueMicrotask(drained);
    }
  }

  /** The lock for a grant (`null`: none); granted after `close()`, it is released and the call fails. */
  private granted(req: LockRequest, grant: HandOffGrant | null): MaybePromise<HeldLock | null> {
    if (!grant) return null;
    const o = req.options;
    const lock = new HeldLock(
      {
        name: req.name,
        key: req.key,
        owner: grant.owner ?? req.owner,
        fencingToken: grant.fencingToken,
        leaseStartedAt: grant.leaseStartedAt ?? req.requestedAt,
        leaseMs: grant.leaseMs ?? o.ttl,
        settings: o,
        parentScope: req.scope,
      },
      this.ctx,
    );
    if (grant.queued || grant.queuedHere) lock.queued = true;
    if (grant.heldUntil !== undefined) lock.continueLease(grant.heldUntil);
    if (grant.hold !== undefined) lock.holdHere(grant.hold);
    if (this.closed) {
      return lock.release().then(() => {
        throw new LockError(grantedAfterCloseMessage(req.name), { lockName: req.name });
      });
    }
    if (grant.queued && this.ctx.observed) this.ctx.emit({ type: 'contended', name: req.name, onHeld: o.onHeld });
    if (this.ctx.observed)
      this.ctx.emit({
        type: 'acquired',
        name: req.name,
        label: o.label,
        fencingToken: grant.fencingToken,
        waitMs: now() - req.requestedAt,
      });
    return lock;
  }
}
