import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import { mysqlLockAsk } from './mysql-lock-holders.js';

/** A call held back until its coalesce ends: what it asked, and its caller's promise. @internal */
export class MysqlLockHeldCall<A, R> {
  /** The caller's promise, settled by {@link settle}. */
  readonly promise: Promise<R>;
  private answer!: (outcome: Promise<R>) => void;

  constructor(readonly args: A) {
    this.promise = new Promise<R>((resolve) => (this.answer = resolve));
  }

  /** Answers the caller with `outcome` (its value or its failure). */
  settle(outcome: R | Promise<R>): void {
    this.answer(Promise.resolve(outcome));
  }
}

/**
 * The calls one `coalesce` issued that go as one statement: a release, and
 * the next waiter of the process for the same name (a plain lock), held back
 * until the coalesce's callback returned.
 * @internal
 */
export class MysqlLockCoalesced {
  /** The release issued, if any: the first one only. */
  release: MysqlLockHeldCall<{ readonly key: string; readonly owner: string }, boolean> | undefined;
  /** The waiting acquire for the released name issued after it, if any. */
  next: MysqlLockHeldCall<LockAcquireRequest, LockGrant | null> | undefined;

  /** Holds a release back: the first one issued within the coalesce. */
  holdRelease(key: string, owner: string): Promise<boolean> | undefined {
    if (this.release) return undefined;
    this.release = new MysqlLockHeldCall({ key, owner });
    return this.release.promise;
  }

  /** Holds `request` back when it is a plain wait for the name released (the first such); `undefined` otherwise. */
  holdNext(request: LockAcquireRequest): Promise<LockGrant | null> | undefined {
    const ask = mysqlLockAsk(request);
    const waits = request.wait && !request.signal?.aborted && request.waitTimeout !== 0;
    if (this.next || this.release?.args.key !== request.key || !waits || ask.shared || ask.limit > 1) return undefined;
    this.next = new MysqlLockHeldCall(request);
    return this.next.promise;
  }
}
