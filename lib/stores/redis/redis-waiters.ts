import { LockStoreError } from '../../errors/lock.errors.js';
import { providerClosedDetail, storeOperations } from '../../errors/lock.messages.js';
import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import { rest, type AcquireTarget, type Waiter } from './redis-waiter.js';
import { now } from '../../shared/clock.js';
import type { RedisClients } from './redis-clients.js';
import type { RedisCommands, ScriptCommand } from './redis-commands.js';
import type { RedisPort } from './redis-client.port.js';
import { groupKind } from './redis-lock.scripts.js';
import {
  CALLS,
  checkLimit,
  type AcquireMode,
  type AcquireReply,
  type HandOff,
  type ScriptCall,
} from './redis-script-calls.js';

/** A script on the six lock keys: its input without the key and the common last argument, which {@link RedisWaiters.lockScript} adds. @internal */
export type LockScriptCommand<I, O, R> = Omit<ScriptCommand<I, O, R>, 'call'> & {
  readonly call: ScriptCall<I & { key: string; common: string }, O>;
};

/** The release scripts (plain, group): owner-checked, then grants from the queue. */
type ReleaseCall = typeof CALLS.release | typeof CALLS.groupRelease;

const noop = (): void => {};
const passed = (reply: AcquireReply): AcquireReply => reply;

/**
 * The queue side of {@link RedisLockProvider}: the scripts on a lock's six
 * keys (the ones that touch the queue, with the common last argument), the
 * local waiters, the subscriber connection on this instance's own channel
 * (`inbox`) and the hand-off notices it brings, and each waiter's wake-ups.
 * A script's grants from the queue to this instance's waiters (no PUBLISH is
 * sent for them) wake those waiters before the script's caller sees the
 * reply. No polling: a waiter re-checks when the holder's lease would end (a
 * crashed holder publishes nothing), and at least every third of the waiter
 * lease, which refreshes its queue entry (it expires if its process dies).
 * Its callers learn of a grant from what the call answers.
 * @internal
 */
export class RedisWaiters {
  private readonly waiters = new Map<string, Waiter>();
  /** Best-effort calls (leaves) that {@link close} waits for. */
  private readonly background = new Set<Promise<unknown>>();
  /** The channel on which hand-offs to this instance's waiters are announced: `<channel>:<instance>`. */
  private readonly inbox: string;
  /** The lock scripts' last argument: `<waiter lease> <instance> <channel prefix>` (one argument: each costs every call). */
  private readonly common: string;
  private sub: RedisPort | undefined;
  private subscribed: Promise<unknown> | true | undefined;

  /**
   * `instance`: the provider's id in queue entries; hand-offs to its waiters are announced on
   * `<channel>:<instance>`. `waiterLease`: how long a waiter's queue entry, and a hand-off it has not
   * renewed yet, lives without a refresh.
   */
  constructor(
    private readonly clients: RedisClients,
    private readonly commands: RedisCommands,
    channel: string,
    instance: string,
    private readonly waiterLease: number,
  ) {
    this.inbox = `${channel}:${instance}`;
    this.common = `${waiterLease} ${instance} ${channel}`;
  }

  /** The subscriber connection, once opened. */
  get subscriber(): RedisPort | undefined {
    return this.sub;
  }

  /**
   * Subscribes (once per provider), then queues and waits. Time spent
   * subscribing counts against the wait's timeout, and an abort meanwhile
   * ends it. The grant is `queued` when it came after queueing (a hand-off
   * or a re-check); without, the first call granted it.
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

  /**
   * One acquire script call (`acquire`, or `group-acquire` for a kind) in
   * `mode`: `'0'` tries, `'1'` queues, `'2'` re-checks (and refreshes the
   * entry); a limit disagreement throws. On failure, makes sure the call
   * leaves nothing behind if it still reaches Redis.
   */
  attempt<R>(target: AcquireTarget, mode: AcquireMode, map: (reply: AcquireReply) => R): Promise<R> {
    const { key, owner, ttl, kind } = target;
    const checked = (reply: AcquireReply): R => (checkLimit(reply, key, kind), map(reply));
    const onError = (): void => this.cleanUp(key, owner);
    if (kind !== undefined)
      return this.lockScript({
        operation: 'acquire',
        key,
        call: CALLS.groupAcquire,
        input: { owner, ttl, mode, kind },
        map: checked,
        onError,
      });
    return this.lockScript({
      operation: 'acquire',
      key,
      call: CALLS.acquire,
      input: { owner, ttl, mode, fences: target.fences },
      map: checked,
      onError,
    });
  }

  /** An owner-checked release by `call` (the plain or the group script), which hands the key to the first live waiter; whether the owner held it. */
  release(key: string, owner: string, call: ReleaseCall = CALLS.release): Promise<boolean> {
    return this.lockScript({ operation: 'release', key, call, input: { owner }, map: (reply) => reply.held });
  }

  /** Leaves the queue (passing the key on if it was granted meanwhile). Best effort: never rejects. */
  leave(key: string, owner: string): Promise<void> {
    return this.lockScript({ operation: 'leave', key, call: CALLS.leave, input: { owner }, map: noop }).catch(noop);
  }

  /** After a failed acquire: leave the queue, release if granted, in the background. Best effort (the lease and the entry expire anyway). */
  cleanUp(key: string, owner: string): void {
    if (this.commands.closed) return;
    this.track(this.leave(key, owner));
  }

  /**
   * A script on the six keys of a lock, with the common last argument (see
   * `LockScript`); the grants it made to this instance's waiters wake them
   * before `map` sees the reply.
   */
  lockScript<I, O extends { readonly handOffs: readonly HandOff[] }, R>(
    command: LockScriptCommand<I, O, R>,
  ): Promise<R> {
    const { key, input, map } = command;
    const delivered = (reply: O): R | PromiseLike<R> => (this.handedOff(reply.handOffs), map(reply));
    // (key and common before the spread: a field added after one makes a new hidden class per call on Node 20)
    return this.commands.script({ ...command, input: { key, common: this.common, ...input }, map: delivered });
  }

  /**
   * Gives every waiter up (each resolves `null` and leaves the queue), waits
   * for the leaves, and returns the subscriber connection, now detached, to
   * close.
   */
  async close(): Promise<RedisPort | undefined> {
    for (const waiter of [...this.waiters.values()]) this.giveUp(waiter);
    const sub = this.sub;
    this.sub = undefined;
    await Promise.allSettled([...this.background]);
    return sub;
  }

  /** Wakes the local waiters a script granted the key to from the queue (no PUBLISH was sent for them). */
  private handedOff(handOffs: readonly HandOff[]): void {
    for (const { owner, token } of handOffs) {
      const waiter = this.waiters.get(owner);
      if (waiter) this.granted(waiter, token);
    }
  }

  /** Keeps a best-effort call running until {@link close}. */
  private track(promise: Promise<unknown>): void {
    this.background.add(promise);
    void promise.finally(() => this.background.delete(promise));
  }

  /** Opens the shared subscriber connection once; a waiter must be subscribed before it queues. `true` once subscribed. */
  private subscribe(key: string): Promise<unknown> | true {
    if (this.commands.closed)
      return Promise.reject(new LockStoreError('acquire', `${providerClosedDetail('Redis')} (key "${key}")`));
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
    const call = this.attempt(waiter, queued ? '2' : '1', passed);
    waiter.inflight = call;
    call.then(
      (reply) => {
        waiter.inflight = undefined;
        if (waiter.settled) return; // gave up meanwhile: giveUp() leaves the queue or passes the key on
        if (reply.status === 'granted') {
          this.settle(waiter);
          const fencingToken = reply.token;
          waiter.resolve(
            queued
              ? { fencingToken, fences: waiter.fences, queued, leaseStartedAt: sent }
              : { fencingToken, fences: waiter.fences },
          );
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
    const left = this.leave(waiter.key, waiter.owner);
    const inflight = waiter.inflight;
    this.track(
      inflight ? Promise.all([left, inflight.catch(noop)]).then(() => this.leave(waiter.key, waiter.owner)) : left,
    );
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
