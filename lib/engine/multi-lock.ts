import type { HeldLock } from './held-lock.js';
import type { LockHandle } from './lock-handle.interface.js';
import { lockScope, type LockEntry, type LockScope } from './lock-context.js';
import { allOf, andThen, type MaybePromise } from '../contract/maybe-promise.js';
import { guardLeaseSignal, type LeaseClock } from './lease-signal.js';

/** A name of a multi-name lock that an outer lock of the call chain already holds (a `reentrant` nested call): used, not taken. @internal */
export interface ReusedName {
  readonly name: string;
  /** The outer lock that holds it. */
  readonly handle: LockScope;
}

/**
 * The handle of a lock of several names (see docs/engine.md, "Several names
 * at once"): the single locks of its names, taken in canonical order, held
 * and released as one. `name` and `key` are the names and keys joined with
 * `,`; `fencingToken` is the first name's (each name's is in
 * `fencingTokens`). Its `signal` aborts when any of its locks is lost, with
 * that lock's {@link LockLostError}. It is its own scope node (found by any
 * of its names) and scoped-call entry. @internal
 */
export class MultiLock implements LockHandle, LockScope, LockEntry, LeaseClock {
  readonly name: string;
  readonly key: string;
  readonly names: readonly string[];
  readonly fencingToken: number;
  readonly fencingTokens: Readonly<Record<string, number>>;
  /** Its names, for {@link findInScope}. */
  readonly nameSet: ReadonlySet<string>;
  private controller: AbortController | undefined;
  /** Removes the listeners the signal put on the parts' signals. */
  private unlisten: Array<() => void> = [];
  private done = false;

  constructor(
    /** The locks it took, in canonical order: what it extends and releases. */
    private readonly parts: readonly HeldLock[],
    readonly parentScope: LockScope | undefined,
    readonly managerId: number,
    keyPrefix: string,
    /** Names an outer lock of the call chain holds (`reentrant`): part of the handle, never extended or released by it. */
    private readonly reused: readonly ReusedName[] = [],
  ) {
    const tokens: Record<string, number> = {};
    for (const part of parts) tokens[part.name] = part.fencingToken;
    for (const { name, handle } of reused) tokens[name] = handle.fencingTokens[name] ?? handle.fencingToken;
    this.names = Object.keys(tokens).sort();
    this.fencingTokens = Object.freeze(tokens);
    this.nameSet = new Set(this.names);
    this.name = this.names.join(',');
    this.key = this.names.map((name) => keyPrefix + name).join(',');
    this.fencingToken = tokens[this.names[0]];
  }

  /** `true` while every one of its names is held (each read on its lease clock). */
  get held(): boolean {
    return !this.done && this.parts.every((p) => p.held) && this.reused.every((r) => r.handle.held);
  }

  /** Marks each of its locks lost whose lease is over (the signal of a lost one aborts this one's). */
  checkLease(): void {
    if (this.done) return;
    for (const part of this.parts) part.checkLease();
    for (const { handle } of this.reused) handle.checkLease();
  }

  get signal(): AbortSignal {
    this.checkLease();
    if (!this.controller) {
      const controller = (this.controller = new AbortController());
      for (const handle of [...this.parts, ...this.reused.map((r) => r.handle)]) {
        const signal = handle.signal;
        if (signal.aborted) {
          controller.abort(signal.reason);
          break;
        }
        const onAbort = (): void => controller.abort(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        this.unlisten.push(() => signal.removeEventListener('abort', onAbort));
      }
      if (!controller.signal.aborted && !this.done) guardLeaseSignal(controller.signal, this);
    }
    return this.controller.signal;
  }

  /** {@link LockEntry}: this lock. */
  get handle(): LockHandle {
    return this;
  }

  /** Runs `fn(...args)` with this lock as the innermost of the call chain. */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R {
    return lockScope.run(this, fn, ...args);
  }

  /** Extends the lease of each lock it took (not those an outer lock holds); throws the first failure. */
  async extend(ms?: number): Promise<void> {
    await Promise.all(this.parts.map((part) => part.extend(ms)));
  }

  release(): Promise<boolean> {
    return Promise.resolve(this.exit());
  }

  /** Releases each lock it took; `true` when every one was still held. Never throws. */
  exit(): MaybePromise<boolean> {
    if (this.done) return false;
    this.done = true;
    for (const unlisten of this.unlisten.splice(0)) unlisten();
    return andThen(allOf(this.parts.map((part) => part.exit())), everyHeld);
  }

  /** {@link exit}, then `next` of its answer. */
  exitThen<R>(next: (held: boolean) => MaybePromise<R>): MaybePromise<R> {
    return andThen(this.exit(), next);
  }
}

/** `true` when there was a lock to release and every one was still held. */
function everyHeld(answers: boolean[]): boolean {
  return answers.length > 0 && answers.every(Boolean);
}
