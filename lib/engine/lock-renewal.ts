import type { LockExtension, LockProvider, MaybePromise } from '../contract/lock-provider.js';

/** The most locks one {@link LockProvider.extendMany} call renews. @internal */
export const MAX_EXTEND_BATCH = 1_000;

/** One lock of a batch waiting to leave, with its caller's promise. */
interface Pending extends LockExtension {
  readonly resolve: (ok: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Renewals of one provider that leave together: the extends asked in one
 * turn of the event loop (the held locks that the timer wakes together) go
 * out as `extendMany` calls of at most {@link MAX_EXTEND_BATCH} locks, sent
 * at the end of the turn's microtasks. Each caller gets its own lock's answer,
 * or the batch's error.
 */
class RenewalBatch {
  private pending: Pending[] = [];

  constructor(private readonly provider: LockProvider & Required<Pick<LockProvider, 'extendMany'>>) {}

  extend(key: string, owner: string, ttl: number): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (this.pending.length === 0) queueMicrotask(() => this.flush());
      this.pending.push({ key, owner, ttl, resolve, reject });
    });
  }

  private flush(): void {
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += MAX_EXTEND_BATCH) this.send(all.slice(i, i + MAX_EXTEND_BATCH));
  }

  private send(batch: Pending[]): void {
    const fail = (error: unknown): void => {
      for (const p of batch) p.reject(error);
    };
    const answer = (oks: boolean[]): void => {
      for (let i = 0; i < batch.length; i++) batch[i].resolve(oks[i] === true);
    };
    let answers: MaybePromise<boolean[]>;
    try {
      answers = this.provider.extendMany(batch);
    } catch (err) {
      fail(err);
      return;
    }
    if (Array.isArray(answers)) answer(answers);
    else answers.then(answer, fail);
  }
}

const batches = new WeakMap<LockProvider, RenewalBatch>();

/**
 * The store call that renews a held lock: batched with the other renewals
 * of this turn when the provider has `extendMany` (every manager of the
 * provider shares the batches), else the provider's `extend`. @internal
 */
export function renewLease(provider: LockProvider, key: string, owner: string, ttl: number): MaybePromise<boolean> {
  if (provider.extendMany === undefined) return provider.extend(key, owner, ttl);
  let batch = batches.get(provider);
  if (!batch) {
    batch = new RenewalBatch(provider as LockProvider & Required<Pick<LockProvider, 'extendMany'>>);
    batches.set(provider, batch);
  }
  return batch.extend(key, owner, ttl);
}

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
  const tick = 2 ** Math.floor(Math.log2(ttl / 12));
  const aligned = Math.floor(due / tick) * tick;
  return aligned > t ? aligned : due;
}
