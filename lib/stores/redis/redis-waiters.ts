import { LockStoreError } from '../../errors/lock.errors.js';
import { providerClosedDetail, storeOperations } from '../../errors/lock.messages.js';
import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import { now } from '../../shared/clock.js';
import type { RedisClients } from './redis-clients.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisPort } from './redis-client.port.js';
import { groupKind } from './redis-lock.scripts.js';
import type { AcquireReply, HandOff, ReleaseReply } from './redis-script-calls.js';

/** A local caller waiting in a Redis queue. @internal */
export interface Waiter {
  readonly key: string;
  readonly owner: string;
  readonly ttl: number;
  /** The engine renews its lease ({@link LockAcquireRequest.renews}): a hand-off's short lease is enough. */
  readonly renews: boolean;
  /** Fencing tokens its grant reserves. */
  readonly fences: number;
  /** A shared or semaphore waiter's kind (`'s'`, `'x<L>'`), see {@link groupKind}; `undefined` for a plain lock. */
  readonly kind: string | undefined;
  readonly resolve: (grant: LockGrant | null) => void;
  readonly reject: (error: unknown) => void;
  settled: boolean;
  /** The script call in flight for this waiter, if any. */
  inflight?: Promise<unknown>;
  /** A grant notice arrived while a call was in flight: check again after it. */
  again: boolean;
  /** The next call is the first (queueing) one: a grant from it is not a hand-off. */
  first: boolean;
  /**
   * The send time of the latest call that Redis answered "not yet" (or of the
   * first call): no later than any hand-off to this waiter, so a hand-off's
   * lease is counted from it.
   */
  safeStart?: number;
  timer?: ReturnType<typeof setTimeout>;
  deadline?: ReturnType<typeof setTimeout>;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** What {@link RedisWaiters} asks of the store's protocol. @internal */
export interface WaiterProtocol {
  /** One acquire script call for the waiter: mode `'1'` queues it, `'2'` re-checks (and refreshes its entry). */
  attempt(waiter: Waiter, mode: '1' | '2'): Promise<AcquireReply>;
  /** Leaves the queue, passing the key on if it was granted meanwhile. Never rejects. */
  leave(key: string, owner: string): Promise<void>;
  /** Keeps a best-effort call running until the provider closes. */
  track(promise: Promise<unknown>): void;
  /** The waiter was granted: `queued`, after queueing (a hand-off or a re-check); else by its first call. */
  granted(waiter: Waiter, queued: boolean): void;
}

const noop = (): void => {};

/** `request` with what is left of its wait since `started`; `null` when it was aborted or its time is up. @internal */
export function rest(request: LockAcquireRequest, started: number): LockAcquireRequest | null {
  if (request.signal?.aborted) return null;
  if (request.waitTimeout === undefined) return request;
  const left = request.waitTimeout - (now() - started);
  return left > 0 ? { ...request, waitTimeout: left } : null;
}

/**
 * The waiting side of {@link RedisLockProvider}: the local waiters, the
 * subscriber connection on this instance's own channel (`inbox`) and the
 * hand-off notices it brings, and each waiter's wake-ups. No polling: a waiter
 * re-checks when the holder's lease would end (a crashed holder publishes
 * nothing), and at least every third of the waiter lease, which refreshes its
 * queue entry (it expires if its process dies).
 * @internal
 */
export class RedisWaiters {
  private readonly waiters = new Map<string, Waiter>();
  private sub: RedisPort | undefined;
  private subscribed: Promise<unknown> | true | undefined;

  constructor(
    private readonly clients: RedisClients,
    private readonly commands: RedisCommands,
    private readonly protocol: WaiterProtocol,
    /** The channel on which hand-offs to this instance's waiters are announced. */
    private readonly inbox: string,
    /** How long a waiter's queue entry, and a hand-off it has not renewed yet, lives without a refresh. */
    private readonly waiterLease: number,
  ) {}

  /** The subscriber connection, once opened. */
  get subscriber(): RedisPort | undefined {
    return this.sub;
  }

  /**
   * Subscribes (once per provider), then queues and waits. Time spent
   * subscribing counts against the wait's timeout, and an abort meanwhile
   * ends it.
   */
  queue(request: LockAcquireRequest, ttl: number, fences: number): Promise<LockGrant | null> {
    const subscribed = this.subscribe(request.key);
    if (subscribed === true) return this.wait(request, ttl, fences);
    const started = now();
    return subscribed.then(() => {
      const next = rest(request, started);
      return next && this.wait(next, ttl, fences);
    });
  }

  /** Wakes the local waiters a script granted the key to from the queue (no PUBLISH was sent for them). */
  handedOff(handOffs: readonly HandOff[]): void {
    for (const { owner, token } of handOffs) {
      const waiter = this.waiters.get(owner);
      if (waiter) this.granted(waiter, token);
    }
  }

  /** An acquire reply as a grant or `null`; wakes a local waiter the call handed the key to. */
  readonly grant = (reply: AcquireReply): LockGrant | null => {
    this.handedOff(reply.handOffs);
    return reply.status === 'granted' ? { fencingToken: reply.token } : null;
  };

  /** {@link grant} for a grant that reserved a block of `fences` tokens. */
  blockGrant(reply: AcquireReply, fences: number): LockGrant | null {
    this.handedOff(reply.handOffs);
    return reply.status === 'granted' ? { fencingToken: reply.token, fences } : null;
  }

  /** An acquire reply, after waking a local waiter the call handed the key to. */
  readonly acquired = (reply: AcquireReply): AcquireReply => {
    this.handedOff(reply.handOffs);
    return reply;
  };

  /** A release reply: whether the owner held the key; wakes a local waiter it was handed to. */
  readonly released = (reply: ReleaseReply): boolean => {
    this.handedOff(reply.handOffs);
    return reply.held;
  };

  /** Gives every waiter up (each resolves `null` and leaves the queue); returns the subscriber connection, now detached, to close. */
  close(): RedisPort | undefined {
    for (const waiter of [...this.waiters.values()]) this.giveUp(waiter);
    const sub = this.sub;
    this.sub = undefined;
    return sub;
  }

  /** Opens the shared subscriber connection once; a waiter must be subscribed before it queues. `true` once subscribed. */
  private subscribe(key: string): Promise<unknown> | true {
    if (this.commands.closed) return Promise.reject(new LockStoreError('acquire', `${providerClosedDetail('Redis')} (key "${key}")`));
    if (!this.subscribed) {
      if (!this.sub) {
        this.sub = this.clients.subscriber();
      }
      const attempt = this.commands.call({
        operation: 'acquire',
        key,
        send: (c) => c.subscribe(this.inbox, this.notice),
        client: this.sub,
        step: storeOperations.subscribeHandOff,
      });
      this.subscribed = attempt;
      attempt.then(
        () => {
          if (this.subscribed === attempt) this.subscribed = true;
        },
        () => {
          if (this.subscribed === attempt) this.subscribed = undefined;
        },
      );
    }
    return this.subscribed;
  }

  /** A hand-off notice on this instance's channel: `<owner> <token>` (granted), or `<owner>` (check again). */
  private readonly notice = (message: string): void => {
    const space = message.indexOf(' ');
    const waiter = this.waiters.get(space < 0 ? message : message.slice(0, space));
    if (!waiter) return;
    const token = space < 0 ? NaN : Number(message.slice(space + 1));
    if (Number.isSafeInteger(token)) this.granted(waiter, token);
    else this.check(waiter);
  };

  /**
   * Queues and waits until granted (by notice or by re-check), timed out,
   * aborted, or closed. The waiter is registered before the first call, so a
   * notice that overtakes that call's reply is not lost.
   */
  private wait(request: LockAcquireRequest, ttl: number, fences: number): Promise<LockGrant | null> {
    return new Promise<LockGrant | null>((resolve, reject) => {
      const kind = groupKind(request);
      const waiter: Waiter = {
        key: request.key,
        owner: request.owner,
        ttl,
        renews: request.renews === true,
        fences,
        kind,
        resolve,
        reject,
        settled: false,
        again: false,
        first: true,
      };
      this.waiters.set(waiter.owner, waiter);
      if (request.waitTimeout !== undefined) {
        waiter.deadline = setTimeout(() => this.giveUp(waiter), request.waitTimeout);
      }
      if (request.signal) {
        waiter.signal = request.signal;
        waiter.onAbort = () => this.giveUp(waiter);
        request.signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.check(waiter);
    });
  }

  /** Next re-check: when the holder's lease would end, and at least every third of the waiter lease. */
  private schedule(waiter: Waiter, holderTtl: number): void {
    if (waiter.settled) return;
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    const refresh = this.waiterLease / 3;
    const delay = holderTtl >= 0 ? Math.min(holderTtl + 2, refresh) : refresh;
    waiter.timer = setTimeout(() => this.check(waiter), delay);
  }

  /** Asks Redis whether the waiter holds the key now (confirming a hand-off), and refreshes its entry. */
  private check(waiter: Waiter): void {
    if (waiter.settled) return;
    if (waiter.inflight) {
      waiter.again = true;
      return;
    }
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    waiter.timer = undefined;
    const sent = now();
    const queued = !waiter.first;
    waiter.first = false;
    waiter.safeStart ??= sent;
    const call = this.protocol.attempt(waiter, queued ? '2' : '1');
    waiter.inflight = call;
    call.then(
      (reply) => {
        waiter.inflight = undefined;
        if (waiter.settled) return; // gave up meanwhile: giveUp() leaves the queue or passes the key on
        if (reply.status === 'granted') {
          this.settle(waiter);
          this.protocol.granted(waiter, queued);
          const fencingToken = reply.token;
          waiter.resolve(queued ? { fencingToken, fences: waiter.fences, queued, leaseStartedAt: sent } : { fencingToken, fences: waiter.fences });
        } else {
          waiter.safeStart = sent;
          if (waiter.again) {
            waiter.again = false;
            this.check(waiter);
          } else {
            this.schedule(waiter, reply.status === 'waiting' ? reply.holderTtl : -1);
          }
        }
      },
      (err: unknown) => {
        waiter.inflight = undefined;
        if (waiter.settled) return;
        this.settle(waiter);
        waiter.reject(err);
      },
    );
  }

  /**
   * A hand-off notice: the release script already set the key to this
   * waiter's token (with a lease of `min(ttl, waiterLease)`) and drew its
   * fencing token, so the waiter starts at once. The engine renews that short
   * lease to the full `ttl` well before it ends. A waiter whose lease the
   * engine does not renew (`renew: false`) and whose `ttl` is longer confirms
   * the hand-off first: the re-check restarts its lease at the full `ttl`.
   */
  private granted(waiter: Waiter, fencingToken: number): void {
    if (waiter.settled || waiter.safeStart === undefined) return;
    if (!waiter.renews && waiter.ttl > this.waiterLease) {
      this.check(waiter);
      return;
    }
    this.settle(waiter);
    this.protocol.granted(waiter, true);
    waiter.resolve({
      fencingToken,
      fences: waiter.fences,
      queued: true,
      leaseStartedAt: waiter.safeStart,
      leaseMs: Math.min(waiter.ttl, this.waiterLease),
    });
  }

  /**
   * Timeout, abort or close: sends the leave (passing the key on if it was
   * granted meanwhile) before it resolves `null`. Calls on one connection run
   * in the order they were written, so every later call of this provider
   * finds the waiter gone. A call still in flight for the waiter may have
   * been sent again after the leave (EVAL after NOSCRIPT): the waiter leaves
   * once more after it.
   */
  private giveUp(waiter: Waiter): void {
    if (waiter.settled) return;
    this.settle(waiter);
    const left = this.protocol.leave(waiter.key, waiter.owner);
    const inflight = waiter.inflight;
    this.protocol.track(inflight ? Promise.all([left, inflight.catch(noop)]).then(() => this.protocol.leave(waiter.key, waiter.owner)) : left);
    waiter.resolve(null);
  }

  private settle(waiter: Waiter): void {
    waiter.settled = true;
    this.waiters.delete(waiter.owner);
    if (waiter.timer !== undefined) clearTimeout(waiter.timer);
    if (waiter.deadline !== undefined) clearTimeout(waiter.deadline);
    if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
  }
}
