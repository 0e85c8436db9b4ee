import type { LockGrant, LockProvider } from '../contract/lock-provider.js';
import type { LockInspectPage } from '../contract/stored-lock.interface.js';
import type { ConformanceCapability, ConformanceOptions, ConformanceTarget } from './conformance-target.interface.js';

/** What a case gets: the store, a key no other case uses, and shortcuts. */
export interface ConformanceContext {
  /** The store under test. */
  readonly p: LockProvider;
  /** The peer provider (another connection to the same store), or `p`. */
  readonly q: LockProvider;
  /** The whole target, as the factory returned it. */
  readonly target: ConformanceTarget;
  /** The options given to the suite. */
  readonly options: ConformanceOptions;
  /** The store's name, as given to the suite. */
  readonly label: string;
  /** A key of this case only. */
  readonly key: string;
  /** `acquire` without waiting, on `p`. */
  take(key: string, owner: string, ttl?: number): Promise<LockGrant | null>;
  /** Every held lock under `prefix`, following the cursor. */
  inspectAll(prefix: string): Promise<LockInspectPage>;
  /** Runs `fn` after the case, passed or failed. */
  onCleanup(fn: () => Promise<unknown> | unknown): void;
}

/** One case of the conformance suite, for an author who registers the cases with a runner by hand. */
export interface ConformanceCase {
  /** The case's name, group first (`holder(): who holds a key › null for a free key; ...`). */
  readonly name: string;
  /** The group it belongs to (a `describe` block), or `undefined` for the top level. */
  readonly group: string | undefined;
  /** The case's own name within its group. */
  readonly title: string;
  /** Longest run in ms; the kit fails the case with a message past it (a store call that never answered). */
  readonly timeout: number;
  /** Why the case does not run on this store (an option, or no `pausedHolder`), or `undefined`. */
  readonly skipped: string | undefined;
  /** What the case needs beyond the plain lock. */
  readonly needs: readonly ConformanceCapability[];
  /** Runs the case against the target set up by {@link ConformanceSuite.setUp}. Throws an `AssertionError` saying what broke. */
  run(): Promise<void>;
}
