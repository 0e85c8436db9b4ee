/** A lock whose signal answers from the lease clock: `checkLease` marks it lost (aborting the signal) once its lease is over. @internal */
export interface LeaseClock {
  checkLease(): void;
}

/** The lock a guarded signal asks (a non-enumerable own property of the signal). */
const leaseOf = Symbol('nest-lock.lease');

type LeaseSignal = AbortSignal & { readonly [leaseOf]: LeaseClock };

const base = AbortSignal.prototype;
const abortedOf = Object.getOwnPropertyDescriptor(base, 'aborted')!.get!;
const reasonOf = Object.getOwnPropertyDescriptor(base, 'reason')!.get!;
const throwIfAbortedOf = base.throwIfAborted;

/** Own properties of a guarded signal: each asks the lock's clock first, then answers as `AbortSignal.prototype` does. */
const guards: PropertyDescriptorMap = {
  aborted: {
    configurable: true,
    get(this: LeaseSignal): boolean {
      this[leaseOf].checkLease();
      return abortedOf.call(this) as boolean;
    },
  },
  reason: {
    configurable: true,
    get(this: LeaseSignal): unknown {
      this[leaseOf].checkLease();
      return reasonOf.call(this);
    },
  },
  throwIfAborted: {
    configurable: true,
    writable: true,
    value(this: LeaseSignal): void {
      this[leaseOf].checkLease();
      throwIfAbortedOf.call(this);
    },
  },
};

/**
 * Makes `signal` (a held lock's) check the lock's lease clock whenever its
 * `aborted`, `reason` or `throwIfAborted()` is read, so that a signal taken
 * before the process paused reads aborted at once when it runs again, before
 * any timer could abort it (see docs/engine.md, "Leases and renewal"). Abort
 * listeners and signals composed from it (`AbortSignal.any`) hear of the
 * loss when the lock's timer or a read marks it lost. Once per signal: the
 * reads themselves allocate nothing. @internal
 */
export function guardLeaseSignal(signal: AbortSignal, lock: LeaseClock): void {
  Object.defineProperty(signal, leaseOf, { value: lock });
  Object.defineProperties(signal, guards);
}
