import type { ChildProcess } from 'node:child_process';
import type { LockProvider } from '../contract/lock-provider.js';

/** What the conformance kit runs its cases against: a store, made fresh by the factory the author passes. */
export interface ConformanceTarget {
  /** The store under test. The kit closes it after the last case. */
  provider: LockProvider;
  /**
   * A second provider on the same store through connections of its own (as
   * another instance of the app would be); closed with the suite. Default: `provider`.
   */
  peer?: LockProvider;
  /** Called after the last case, after `provider.close()`. */
  cleanup?: () => Promise<void>;
  /**
   * How long, in ms, the store may keep something of a name after its last
   * release (Redis: its fencing counter, for a short grace). Default 0.
   */
  releaseWindowMs?: number;
  /**
   * What the store still keeps of `key` (for example the Redis keys of the
   * name that exist). A store whose records can be looked at gives it, and
   * must keep nothing of a released name past `releaseWindowMs`.
   */
  leftovers?: (key: string) => Promise<string[]>;
}

/**
 * A child process that runs {@link runPausedHolder} on the same store: the
 * author writes a script that opens the store and calls
 * `runPausedHolder(provider, process.argv[2])`, and `spawn` starts it with
 * that argument (its stdout piped).
 */
export interface PausedHolderProcess {
  /** Starts the script with `argument` as its first command-line argument, stdout piped. */
  spawn(argument: string): ChildProcess;
  /**
   * `false` when the child's store is its own (an in-process store): the
   * child then takes the lock a second time itself. Default `true`: this
   * process takes it while the child is stopped.
   */
  sharesStore?: boolean;
}

/**
 * What a store does not offer: each `false` leaves out the cases that need
 * it, named with the reason in one warning of the test output (and checks
 * that the store really does not declare it, where it can). Everything
 * defaults to `true`.
 */
export interface ConformanceOptions {
  /** `acquire` with `wait: true` queues FIFO until granted, timed out or aborted. */
  waiting?: boolean;
  /** Semaphores (`limit`) and read/write locks (`mode: 'shared'`), declared in `supports`. */
  limitAndShared?: boolean;
  /** `acquireMany`: several plain locks in one call, all or none. */
  acquireMany?: boolean;
  /** `extendMany`: many leases extended in one call. */
  extendMany?: boolean;
  /** `holder(key)`: who holds a key. */
  holder?: boolean;
  /** `inspect(request)`: the locks held under a prefix, by pages. */
  inspect?: boolean;
  /**
   * How to start a holder in another process on the same store, for the
   * cases about a holder paused past its lease (SIGSTOP). Without it those
   * cases are left out, by name. See {@link PausedHolderProcess}.
   */
  pausedHolder?: PausedHolderProcess;
}

/** A capability a case needs: an option of {@link ConformanceOptions}. */
export type ConformanceCapability = keyof ConformanceOptions;
