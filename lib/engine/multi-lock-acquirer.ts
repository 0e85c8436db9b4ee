import type { HeldLock, HeldLockContext } from './held-lock.js';
import type { LockAcquirer } from './lock-acquirer.js';
import type { LockRequests } from './lock-requests.js';
import type { LockRequest } from './lock-request.js';
import type { LockOutcomes } from './lock-outcomes.js';
import type { ResolvedCallOptions } from './resolved-call-options.js';
import { findInScope, lockScope, ReenteredEntry, type LockEntry, type LockScope } from './lock-context.js';
import { MultiLock, type ReusedName } from './multi-lock.js';
import { LockReentryError } from '../errors/lock.errors.js';
import type { MaybePromise } from '../contract/lock-provider.js';
import { now } from '../shared/clock.js';

const asIs = <T>(value: T): T => value;

/** The outcome of {@link MultiLockAcquirer.takeAll}: every lock, or the request that missed (the others were released). */
type Taken = { readonly locks: HeldLock[] } | { readonly missed: LockRequest; readonly started: number };

/**
 * Takes several names as one lock (see docs/engine.md, "Several names at
 * once"): first all in one store call, when the store has `acquireMany` and
 * every name is free; else one after the other in canonical order (sorted,
 * without duplicates: the caller passes them so), so that callers of
 * overlapping names never wait on each other in a cycle; all or none: when
 * one name is held (and not waited for), a wait for it ends, or the store fails, the
 * names already taken are released before the call answers. Each name is
 * a single lock with its own fencing token, events and lease. @internal
 */
export class MultiLockAcquirer {
  constructor(
    private readonly ctx: HeldLockContext,
    private readonly keyPrefix: string,
    private readonly outcomes: LockOutcomes,
    private readonly acquirer: LockAcquirer,
    private readonly requests: LockRequests,
  ) {}

  /** `tryAcquire(names)`: every name at once, or `null`. */
  async tryAcquire(names: readonly string[], options: ResolvedCallOptions): Promise<MultiLock | null> {
    const taken = await this.takeAll(
      names,
      options.onHeld === 'wait' ? { ...options, onHeld: 'throw' } : options,
      undefined,
    );
    return 'locks' in taken ? this.lock(taken.locks, undefined) : null;
  }

  /** `acquire(names)`: waits for each name in turn, within one `waitTimeout` for all. */
  async acquire(names: readonly string[], options: ResolvedCallOptions): Promise<MultiLock> {
    const taken = await this.takeAll(names, options, undefined);
    if ('missed' in taken) throw this.outcomes.waitFailed(taken.missed, taken.started);
    return this.lock(taken.locks, undefined);
  }

  /**
   * A scoped call's entry (`withLock`, `@Locked`), following `onHeld`;
   * `undefined` when skipped. A name an outer lock of the call chain holds
   * fails with {@link LockReentryError}, or with `reentrant` is used as it is.
   */
  async enter(names: readonly string[], options: ResolvedCallOptions): Promise<LockEntry | undefined> {
    const scope = lockScope.getStore();
    let reused: ReusedName[] | undefined;
    for (const name of names) {
      const outer = scope && findInScope(scope, name, this.ctx.managerId);
      if (!outer?.held) continue;
      if (!options.reentrant) throw new LockReentryError(name);
      (reused ??= []).push({ name, handle: outer });
    }
    const toTake = reused ? names.filter((name) => !reused.some((r) => r.name === name)) : names;
    if (toTake.length === 0) return new ReenteredEntry(this.lock([], scope, reused));
    const taken = await this.takeAll(toTake, options, scope);
    if ('missed' in taken) return this.outcomes.entered(taken.missed, taken.started, null);
    return this.lock(taken.locks, scope, reused);
  }

  private lock(locks: HeldLock[], scope: LockScope | undefined, reused?: ReusedName[]): MultiLock {
    return new MultiLock(locks, scope, this.ctx.managerId, this.keyPrefix, reused);
  }

  /**
   * Takes `names` in one store call when it can, else in order; on a miss or
   * a failure, releases what it took. A wait's `waitTimeout` bounds the whole call.
   */
  private async takeAll(
    names: readonly string[],
    options: ResolvedCallOptions,
    scope: LockScope | undefined,
  ): Promise<Taken> {
    const started = now();
    const batch =
      names.length > 1 && this.ctx.provider.acquireMany
        ? this.takeMany(names.map((name) => this.requests.make(name, options, scope)))
        : undefined;
    const all = await batch;
    if (all) return { locks: all };
    const locks: HeldLock[] = [];
    try {
      for (const name of names) {
        const o =
          options.onHeld === 'wait' && options.waitTimeout !== undefined && (locks.length > 0 || all === null)
            ? { ...options, waitTimeout: Math.max(0, options.waitTimeout - (now() - started)) }
            : options;
        const req = this.requests.make(name, o, scope);
        const taking = this.ctx.observed
          ? this.outcomes.watch(req, () => this.acquirer.take(req, asIs), asIs)
          : this.acquirer.take(req, asIs);
        const lock = await taking;
        if (!lock) {
          await releaseAll(locks);
          return { missed: req, started };
        }
        locks.push(lock);
      }
    } catch (err) {
      await releaseAll(locks);
      throw err;
    }
    return { locks };
  }

  /**
   * Takes every name in one store call, each as a single call would (with
   * its events when observed); `null` when the store could not take them all
   * at once, `undefined` when this path does not serve them (see {@link LockAcquirer.takeMany}). The store has `acquireMany`.
   */
  private takeMany(reqs: readonly LockRequest[]): MaybePromise<HeldLock[] | null> | undefined {
    return this.ctx.observed
      ? this.outcomes.watchMany(reqs, () => this.acquirer.takeMany(reqs))
      : this.acquirer.takeMany(reqs);
  }
}

/** Releases `locks` (never throws: a store failure is logged and the leases expire on their own). */
async function releaseAll(locks: readonly HeldLock[]): Promise<void> {
  await Promise.all(locks.map((lock) => lock.exit()));
}
