import { isThenable, type LockExtension, type LockProvider, type MaybePromise } from '../contract/lock-provider.js';

/** The most locks one {@link LockProvider.extendMany} call renews. @internal */
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
 * Renewals of one provider that leave together: the extends asked in one
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
    for (let i = 0; i < all.length; i += MAX_EXTEND_BATCH) this.send(all.length <= MAX_EXTEND_BATCH ? all : all.slice(i, i + MAX_EXTEND_BATCH));
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
    if (isThenable(answers)) answers.then(answer, fail);
    else answer(answers);
  }
}

const batches = new WeakMap<LockProvider, RenewalBatch>();

/**
 * Sends the store call that renews a held lock, and tells `done` its answer
 * (never synchronously): batched with the other renewals of this turn when
 * the provider has `extendMany` (every manager of the provider shares the
 * batches), else the provider's `extend`. @internal
 */
export function renewLease(provider: LockProvider, key: string, owner: string, ttl: number, done: RenewalDone): void {
  if (provider.extendMany === undefined) {
    let answer: MaybePromise<boolean>;
    try {
      answer = provider.extend(key, owner, ttl);
    } catch (err) {
      queueMicrotask(() => done(asError(err)));
      return;
    }
    if (isThenable(answer)) answer.then(done, (err: unknown) => done(asError(err)));
    else queueMicrotask(() => done(answer));
    return;
  }
  let batch = batches.get(provider);
  if (!batch) {
    batch = new RenewalBatch(provider as LockProvider & Required<Pick<LockProvider, 'extendMany'>>);
    batches.set(provider, batch);
  }
  batch.extend(key, owner, ttl, done);
}

let tickTtl = NaN;
let tickMs = 0;

/**
 * When a held lock renews next: at `due` (a third of the ttl, or earlier),
 * moved earlier to a grid of ticks when the provider batches renewals, so
 * that locks taken at different moments fall due together and share one
 * `extendMany` call. A tick is a power of two of at most a twelfth of the
 * ttl (the grids of different ttls line up), so a renewal comes at most that
 * much early and never later. @internal
 */
export function renewalAt(provider: LockProvider, t: number, due: number, ttl: number): number {
  if (provider.extendMany === undefined || ttl < 24) return due;
  // (most locks of a process share one ttl: its tick is worked out once)
  if (ttl !== tickTtl) {
    tickTtl = ttl;
    tickMs = 2 ** Math.floor(Math.log2(ttl / 12));
  }
  const tick = tickMs;
  const aligned = Math.floor(due / tick) * tick;
  return aligned > t ? aligned : due;
}
