import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import { timerDelay } from '../../shared/timer.js';
import type { PostgresLockAsk } from './postgres-lock-attempt.js';

/** A caller that waits for its turn, with its ticket in the queue table. @internal */
export interface PostgresLockWaiter extends PostgresLockAsk {
  readonly ticket: string;
  done: boolean;
  /** It gave up (timeout, abort): its call answers `null` once its ticket is gone (or its grant released). */
  leaving?: boolean;
  /** A release granted it the key directly (its NOTIFY settled it): a statement of its in flight is moot. */
  granted?: boolean;
  readonly settle: (result: LockGrant | null | Error) => void;
}

/**
 * A waiter for `ask` with its `ticket`, and what its call answers once it is
 * settled; on the request's `waitTimeout` or abort it calls `leave`.
 * @internal
 */
export function newWaiter(
  ask: PostgresLockAsk,
  ticket: string,
  request: Pick<LockAcquireRequest, 'signal' | 'waitTimeout'>,
  leave: (waiter: PostgresLockWaiter) => void,
): { waiter: PostgresLockWaiter; answer: Promise<LockGrant | null> } {
  const { signal, waitTimeout } = request;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = (): void => leave(waiter);
  let resolve!: (grant: LockGrant | null) => void;
  let reject!: (err: Error) => void;
  const answer = new Promise<LockGrant | null>((res, rej) => ((resolve = res), (reject = rej)));
  const waiter: PostgresLockWaiter = {
    ticket,
    done: false,
    settle: (result) => {
      if (waiter.done) return;
      waiter.done = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (result instanceof Error) reject(result);
      else resolve(result);
    },
    ...ask,
  };
  // (not unref'd: like any timer, a pending wait keeps the process alive until it ends)
  if (waitTimeout !== undefined) timer = setTimeout(() => leave(waiter), waitTimeout);
  signal?.addEventListener('abort', onAbort, { once: true });
  return { waiter, answer };
}

/** The local waiters of one key, and when its head looks again. @internal */
export interface PostgresLockWaitQueue {
  /** Local waiters with a ticket, in ticket order: only the head asks the database. */
  readonly waiters: PostgresLockWaiter[];
  /** The head's statement is in flight. */
  busy: boolean;
  /** Woken while busy: the head asks again when its statement is done. */
  again: boolean;
  failures: number;
  /** When the failed attempt was sent: if it committed after all, the lease started then. */
  failedAt?: number;
  wake?: ReturnType<typeof setTimeout>;
  /** When `wake` fires (performance.now() time). */
  wakeAt?: number;
}

/** An empty queue. @internal */
export const newWaitQueue = (): PostgresLockWaitQueue => ({ waiters: [], busy: false, again: false, failures: 0 });

/** Puts `waiter` into `queue` in ticket order. @internal */
export function insertByTicket(queue: PostgresLockWaitQueue, waiter: PostgresLockWaiter): void {
  const t = BigInt(waiter.ticket);
  const at = queue.waiters.findIndex((w) => BigInt(w.ticket) > t);
  queue.waiters.splice(at < 0 ? queue.waiters.length : at, 0, waiter);
}

/** Calls `kick` in `ms` (plus a little, so that a lease has surely ended), instead of any earlier schedule. @internal */
export function arm(queue: PostgresLockWaitQueue, ms: number, kick: () => void): void {
  disarm(queue);
  const delay = timerDelay(Math.max(0, ms) + 15);
  queue.wakeAt = performance.now() + delay;
  queue.wake = setTimeout(kick, delay);
  queue.wake.unref?.();
}

/** Cancels the queue's schedule. @internal */
export function disarm(queue: PostgresLockWaitQueue): void {
  if (queue.wake !== undefined) clearTimeout(queue.wake);
  queue.wake = undefined;
  queue.wakeAt = undefined;
}

/** The NOTIFYs (their `<ticket>,<ms>`) heard for a key while a queueing statement was in flight. @internal */
export interface PostgresLockWatch {
  readonly heard: string[];
}

/** The queueing statements in flight, per key, and the NOTIFYs heard for their keys meanwhile. @internal */
export class PostgresLockWatches {
  private readonly byKey = new Map<string, Set<PostgresLockWatch>>();

  /** A queueing statement for `key` goes out. */
  open(key: string): PostgresLockWatch {
    const watch = { heard: [] };
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(watch);
    return watch;
  }

  /** Its answer came (or it failed). */
  close(key: string, watch: PostgresLockWatch): void {
    const set = this.byKey.get(key);
    set?.delete(watch);
    if (set?.size === 0) this.byKey.delete(key);
  }

  /** A NOTIFY for `key` named `next`. */
  heard(key: string, next: string): void {
    for (const watch of this.byKey.get(key) ?? []) watch.heard.push(next);
  }
}

/**
 * When a waiter that just took `ticket` looks again (ms), given the NOTIFYs
 * `heard` while its statement was in flight (it was not in the local queue
 * yet) and `ms`, what the statement's answer says. At once if one may have
 * been meant for it (an empty `next`, or its own ticket or a later one: it
 * may be next); otherwise a NOTIFY naming an earlier live ticket hands the
 * turn to that waiter, whose grant and release notify again: only if that
 * waiter died, its lease lapses, and this one looks again then.
 * @internal
 */
export function recheckAfter(heard: readonly string[], ticket: string, ms: number, waiterLease: number): number {
  let at = ms;
  for (const next of heard) {
    const [first, left] = next.split(',');
    if (!first || !/^[0-9]+$/.test(first) || BigInt(first) >= BigInt(ticket)) return 0;
    at = Math.min(at, Math.min(Number(left) || waiterLease, waiterLease));
  }
  return at;
}

/** A grant a release made to a waiter, as its NOTIFY names it (`<ticket>,<ms>,<token>,<at>`). @internal */
export interface PostgresLockDirectGrant {
  readonly ticket: string;
  /** The lease, in ms from `at`. */
  readonly leaseMs: number;
  /** The first of the waiter's block of fencing tokens. */
  readonly fencingToken: number;
  /** When the lease started: epoch ms on the database clock. */
  readonly at: number;
}

/** The direct grant a NOTIFY's `next` names, if it names one (else it names a ticket that asks again). @internal */
export function directGrantOf(next: string): PostgresLockDirectGrant | undefined {
  const [ticket, ms, token, at] = next.split(',');
  if (!ticket || !/^[0-9]+$/.test(ticket) || token === undefined || at === undefined) return undefined;
  const grant = { ticket, leaseMs: Number(ms), fencingToken: Number(token), at: Number(at) };
  return Number.isFinite(grant.leaseMs) && Number.isFinite(grant.fencingToken) && Number.isFinite(grant.at)
    ? grant
    : undefined;
}
