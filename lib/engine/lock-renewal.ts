import { type LockExtension, type LockProvider, type MaybePromise } from '../contract/lock-provider.js';

/** The most locks one {@link LockProviderCapabilities.extendMany} call renews. @internal */
export const MAX_EXTEND_BATCH = 1_000;

/** What a renewal is told: extended (`true`), not held by its owner any more (`false`), or the store's failure. @internal */
export type RenewalDone = (answer: boolean | Error) => void;

/** One lock of a batch waiting to leave, with its caller's callback. */
interface Pending extends LockExtension {
  readonly done: RenewalDone;
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** Tells each lock of a batch its answer; one lock's failing callback does not keep the others from theirs. */
function tell(batch: readonly Pending[], answer: (i: number) => boolean | Error): void {
  for (let i = 0; i < batch.length; i++) {
    try {
      batch[i].done(answer(i));
    } catch (err) {
      queueMicrotask(() => {
        throw err;
      });
    }
  }
}

/**
 * Renewals of one manager that leave together: the extends asked in one
 * turn of the event loop (the held locks that the timer wakes together) go
 * out as `extendMany` calls of at most {@link MAX_EXTEND_BATCH} locks, sent
 * at the end of the turn's microtasks. Each lock is told its own answer, or
 * the batch's error. Callbacks, not promises: a lock waiting on a batch costs
 * one small object.
 */
class RenewalBatch {
  private pending: Pending[] = [];

  constructor(private readonly provider: LockProvider & Required<Pick<LockProvider, 'extendMany'>>) {}

  extend(key: string, owner: string, ttl: number, done: RenewalDone): void {
    if (this.pending.length === 0) queueMicrotask(() => this.flush());
    this.pending.push({ key, owner, ttl, done });
  }

  private flush(): void {
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += MAX_EXTEND_BATCH)
      this.send(all.length <= MAX_EXTEND_BATCH ? all : all.slice(i, i + MAX_EXTEND_BATCH));
  }

  private send(batch: Pending[]): void {
    const fail = (err: unknown): void => {
      const error = asError(err);
      tell(batch, () => error);
    };
    const answer = (oks: boolean[]): void => tell(batch, (i) => oks[i] === true);
    let answers: MaybePromise<boolean[]>;
    try {
      answers = this.provider.extendMany(batch);
    } catch (err) {
      fail(err);
      return;
    }
    Promise.resolve(answers).then(answer, fail);
  }
}

/**
 * The renewal store calls of one manager's held locks: each renewal is sent
 * (and its answer told to `done`, never synchronously) batched with the
 * manager's other renewals of this turn when the provider has `extendMany`,
 * else as the provider's `extend`; and renewal times are put on a grid of
 * ticks so that they fall due together. The manager builds one and hands it
 * to its locks (`HeldLockContext.renewals`). @internal
 */
export class LockRenewals {
  /** The batch of this turn's renewals, when the provider renews many locks in one call. */
  private readonly batch: RenewalBatch | undefined;
  /** The ttl of the last {@link at} and its tick (most locks of a process share one ttl: its tick is worked out once). */
  private tickTtl = NaN;
  private tickMs = 0;

  constructor(private readonly provider: LockProvider) {
    this.batch =
      provider.extendMany === undefined
        ? undefined
        : new RenewalBatch(provider as LockProvider & Required<Pick<LockProvider, 'extendMany'>>);
  }

  /** Sends the store call that renews a held lock, and tells `done` its answer (never synchronously). */
  renew(key: string, owner: string, ttl: number, done: RenewalDone): void {
    if (this.batch !== undefined) {
      this.batch.extend(key, owner, ttl, done);
      return;
    }
    let answer: MaybePromise<boolean>;
    try {
      answer = this.provider.extend(key, owner, ttl);
    } catch (err) {
      queueMicrotask(() => done(asError(err)));
      return;
    }
    Promise.resolve(answer).then(done, (err: unknown) => done(asError(err)));
  }

  /**
   * When a held lock renews next: at `due` (a third of the ttl, or earlier),
   * moved earlier to a grid of ticks when the provider batches renewals, so
   * that locks taken at different moments fall due together and share one
   * `extendMany` call. A tick is a power of two of at most a twelfth of the
   * ttl (the grids of different ttls line up), so a renewal comes at most that
   * much early and never later.
   */
  at(t: number, due: number, ttl: number): number {
    if (this.batch === undefined || ttl < 24) return due;
    if (ttl !== this.tickTtl) {
      this.tickTtl = ttl;
      this.tickMs = 2 ** Math.floor(Math.log2(ttl / 12));
    }
    const tick = this.tickMs;
    const aligned = Math.floor(due / tick) * tick;
    return aligned > t ? aligned : due;
  }
}
