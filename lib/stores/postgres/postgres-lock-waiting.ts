import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { PostgresLockDatabase } from './postgres-lock-database.js';
import { PostgresLockListener, type PostgresLockNotice } from './postgres-lock-listener.js';
import { PostgresLockTickets, type PostgresLockEntry } from './postgres-lock-tickets.js';
import { PostgresLockClock } from './postgres-lock-clock.js';
import {
  arm,
  disarm,
  insertByTicket,
  directGrantOf,
  newWaitQueue,
  newWaiter,
  recheckAfter,
  type PostgresLockDirectGrant as DirectGrant,
  type PostgresLockWaitQueue as Queue,
  PostgresLockWatches,
  type PostgresLockWaiter as Waiter,
} from './postgres-lock-wait-queue.js';
import type { PostgresLockTables } from './postgres-lock-tables.js';
import type { PostgresLockStatements } from './postgres-lock-statements.js';
import type { PostgresLockAsk as Ask } from './postgres-lock-attempt.js';
import type { PostgresLockHolds } from './postgres-lock-holds.js';

/**
 * The waiting side of the PostgreSQL store: callers queued by ticket (in the
 * waiters table, and locally per key, where only the head asks the database),
 * woken by NOTIFY, at the holder's lease end, or after the listen connection
 * came back; a heartbeat renews their queue entries while they wait.
 * @internal
 */
export class PostgresLockWaiting {
  private readonly queues = new Map<string, Queue>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Queueing statements in flight, per key. */
  private readonly watches = new PostgresLockWatches();
  /** Where the lease of a direct grant started, in local time. */
  private readonly clock = new PostgresLockClock();
  private readonly listener: PostgresLockListener;
  /** The waiters' entries in the queue table. */
  private readonly tickets: PostgresLockTickets;

  /** `waiterLease`: how long a waiter's queue entry lives unless its process renews it. */
  constructor(
    private readonly database: PostgresLockDatabase,
    tables: PostgresLockTables,
    sql: PostgresLockStatements,
    private readonly holds: PostgresLockHolds,
    private readonly waiterLease: number,
  ) {
    this.tickets = new PostgresLockTickets(database, tables, sql, waiterLease, this.clock);
    this.listener = new PostgresLockListener(database, tables);
  }

  /** Removes, in the background, the queue entries whose removal failed earlier (after a call that succeeded). */
  dropOrphans(): void {
    void this.track(this.tickets.dropOrphans().then((granted) => this.releaseGranted(granted)));
  }

  /**
   * Queues a call that will wait: one statement grants the lock or takes its
   * ticket (its place in line is its arrival), then it waits for its turn.
   */
  async acquire(request: LockAcquireRequest, ask: Ask): Promise<LockGrant | null> {
    const { key, owner } = ask;
    // A first wait opens the LISTEN connection meanwhile; a release committed before LISTEN took effect
    // may not be heard, so such a waiter looks again as soon as it listens.
    let heard: readonly string[] = [];
    const cold = !this.listener.listening;
    const first = await this.database.bounded('acquire', key, async () => {
      const watch = this.watches.open(key);
      try {
        const sent = performance.now();
        const queueing = this.holds.attempt(ask, null, true).then((r) => (this.clock.sample(sent, r.nowMs), r));
        // (a cold LISTEN connection opens once the statement is on its way, so as not to hold it up)
        const listening = cold
          ? new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.listen())
          : this.listen();
        const [queued, listened] = await Promise.allSettled([queueing, listening]);
        if (queued.status === 'rejected') throw queued.reason;
        if (listened.status === 'rejected') {
          // Cannot wait without LISTEN: give back what the statement got, then fail.
          if (queued.value.token !== null) await this.release(key, owner).catch(() => undefined);
          else if (queued.value.ticket !== null) await this.drop([{ ticket: queued.value.ticket, key, owner }]);
          throw listened.reason;
        }
        return queued.value;
      } finally {
        this.watches.close(key, watch);
        heard = watch.heard;
      }
    });
    this.dropOrphans(); // (the statement succeeded: the database is there)
    if (first.token !== null) return { fencingToken: first.token, fences: ask.fences };
    if (first.ticket === null) return null; // cannot happen: not granted means queued
    // A release may have granted it the key before this answer arrived.
    const granted = heard.map(directGrantOf).find((g) => g?.ticket === first.ticket);
    const start = granted && this.clock.leaseStart(granted.at);
    if (granted && start !== undefined) {
      const { fencingToken, leaseMs } = granted;
      if (!request.signal?.aborted && !this.database.closed)
        return { fencingToken, fences: ask.fences, queued: true, leaseStartedAt: start, leaseMs };
      await this.release(key, owner).catch(() => undefined);
      return null;
    }
    if (request.signal?.aborted || this.database.closed) {
      await this.drop([{ ticket: first.ticket, key, owner }]);
      return null;
    }
    return this.wait(
      request,
      ask,
      first.ticket,
      cold ? 0 : recheckAfter(heard, first.ticket, first.heldMs ?? first.aheadMs ?? 50, this.waiterLease),
    );
  }

  /**
   * The lock `key` changed hands or its line moved; `next` is `<ticket>,<ms>`,
   * the first live ticket in line and what is left of its lease ('' for
   * everyone), or `<ticket>,<ms>,<token>,<at>`, a grant a release made to that
   * ticket (with a lease of `<ms>`): its local waiter starts at once. The local
   * head asks again if it is that ticket or before it. A head further back
   * only makes sure it looks again when that ticket's lease would lapse, in
   * case its waiter died.
   */
  wake(key: string, next: string): void {
    const queue = this.queues.get(key);
    const head = queue?.waiters[0];
    if (!queue || !head) return;
    const grant = directGrantOf(next);
    if (grant && this.grant(key, queue, grant)) return;
    const [ticket, ms] = next.split(',');
    if (!ticket || !/^[0-9]+$/.test(ticket) || BigInt(head.ticket) <= BigInt(ticket)) {
      this.kick(key);
      return;
    }
    const lapse = Math.min(Number(ms) || this.waiterLease, this.waiterLease);
    if (!queue.busy && (queue.wakeAt === undefined || queue.wakeAt > performance.now() + lapse))
      this.arm(key, queue, lapse);
  }

  /** Releases the owner's hold and wakes this process's waiters at once (no NOTIFY round trip); whether it still held it. */
  async release(key: string, owner: string): Promise<boolean> {
    const row = await this.holds.release(key, owner);
    if (row) this.wake(key, (row.next as string | null) ?? '');
    return row?.live === true;
  }

  /**
   * Resolves queued waiters `null` and removes their tickets, waits for the
   * work in flight, and ends the LISTEN connection (the database is closed already).
   */
  async close(): Promise<void> {
    const entries: Waiter[] = [];
    for (const [key, queue] of this.queues) {
      for (const waiter of queue.waiters.splice(0)) {
        entries.push(waiter);
        waiter.settle(null);
      }
      disarm(queue);
      this.queues.delete(key);
    }
    this.tickets.stopHeartbeat();
    this.listener.stop();
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await Promise.all([this.tickets.settled(), this.listener.settled()]);
    await this.releaseGranted(await this.tickets.dropOnClose(entries));
    await this.listener.end();
  }

  /**
   * A release granted `key` to ticket `grant.ticket`: settles its local waiter
   * (one that gave up releases it). `false` when no local waiter has that
   * ticket, or the lease start cannot be told (it then asks).
   */
  private grant(key: string, queue: Queue, grant: DirectGrant): boolean {
    const i = queue.waiters.findIndex((w) => w.ticket === grant.ticket);
    const start = i < 0 ? undefined : this.clock.leaseStart(grant.at);
    if (start === undefined) return false;
    const [waiter] = queue.waiters.splice(i, 1);
    waiter.granted = true;
    if (waiter.done || waiter.leaving) this.handOn(waiter);
    else
      waiter.settle({
        fencingToken: grant.fencingToken,
        fences: waiter.fences,
        queued: true,
        leaseStartedAt: start,
        leaseMs: grant.leaseMs,
      });
    if (queue.waiters.length === 0) this.forget(key, queue);
    // The next one looks again by the time the new holder's lease would end (if it never releases), unless sooner already.
    else if (i === 0 && (queue.wakeAt === undefined || queue.wakeAt > performance.now() + grant.leaseMs))
      this.arm(key, queue, grant.leaseMs);
    return true;
  }

  /** A waiter gave up while its turn came: hands the lock on, then its call answers. */
  private handOn(waiter: Waiter): void {
    const settle = (): void => waiter.settle(null);
    void this.track(this.release(waiter.key, waiter.owner).then(settle, settle));
  }

  /** The LISTEN connection, with what it hears going to {@link heard}. */
  private listen(): Promise<unknown> {
    return this.listener.listen(
      (notice) => this.heard(notice),
      () => this.queues.size > 0,
    );
  }

  /** A NOTIFY for `key` naming `next` arrived; `null`: notifications may have been missed, every local head looks again. */
  private heard(notice: PostgresLockNotice): void {
    if (notice === null) {
      for (const key of [...this.queues.keys()]) this.kick(key);
      return;
    }
    this.watches.heard(notice.key, notice.next);
    this.wake(notice.key, notice.next);
  }

  /** Joins the local queue with the ticket just taken (a new head looks again after `recheckMs`, unless woken first); answers its grant. */
  private wait(request: LockAcquireRequest, ask: Ask, ticket: string, recheckMs: number): Promise<LockGrant | null> {
    const { waiter, answer } = newWaiter(ask, ticket, request, (w) => this.leave(w));
    let queue = this.queues.get(waiter.key);
    if (!queue) {
      queue = newWaitQueue();
      this.queues.set(waiter.key, queue);
    }
    insertByTicket(queue, waiter);
    this.tickets.startHeartbeat(
      () => [...this.queues.values()].flatMap((q) => q.waiters.map((w) => w.ticket)),
      () => this.listener.check(),
    );
    // (the head before it keeps its own schedule)
    if (queue.waiters[0] === waiter && recheckMs <= 0) this.kick(waiter.key);
    else if (queue.waiters[0] === waiter && !queue.busy) this.arm(waiter.key, queue, recheckMs);
    return answer;
  }

  /**
   * A waiter gives up (timeout, abort): leaves both queues, wakes the next,
   * and resolves `null` once its ticket is gone from the table, so that its
   * caller's next call never finds it in the way. A head whose statement is
   * in flight is left to {@link retry}, which releases what that statement
   * may grant.
   */
  private leave(waiter: Waiter): void {
    if (waiter.done || waiter.leaving) return;
    waiter.leaving = true;
    const queue = this.queues.get(waiter.key);
    const i = queue ? queue.waiters.indexOf(waiter) : -1;
    if (queue && i === 0 && queue.busy) return;
    if (queue && i >= 0) {
      queue.waiters.splice(i, 1);
      if (queue.waiters.length === 0) this.forget(waiter.key, queue);
      else if (i === 0) this.kick(waiter.key);
    }
    void this.track(this.drop([waiter]).then(() => waiter.settle(null)));
  }

  /** Lets the head of the local queue for `key` try again (once at a time). */
  private kick(key: string): void {
    const queue = this.queues.get(key);
    if (!queue || this.database.closed) return;
    if (queue.busy) {
      queue.again = true;
      return;
    }
    void this.track(this.retry(key, queue));
  }

  private async retry(key: string, queue: Queue): Promise<void> {
    const head = queue.waiters[0];
    if (!head) return;
    queue.busy = true;
    queue.again = false;
    disarm(queue);
    let next: number | undefined;
    const sent = performance.now(); // the lease starts on the server after this
    try {
      const r = await this.database.bounded('acquire', key, () => this.holds.attempt(head, head.ticket));
      this.clock.sample(sent, r.nowMs);
      this.dropOrphans();
      const leaseStartedAt = r.token === null ? (queue.failedAt ?? sent) : sent;
      queue.failures = 0;
      queue.failedAt = undefined;
      const token = r.token ?? r.mine;
      if (head.granted) {
        // A release granted it the key meanwhile, and its NOTIFY settled it.
      } else if (token !== null) {
        const i = queue.waiters.indexOf(head);
        if (i >= 0) queue.waiters.splice(i, 1);
        if (head.done || head.leaving) {
          this.handOn(head);
        } else {
          // (`mine`: granted by a release or by an attempt whose answer was lost; its lease ends no sooner than `mineMs` after `sent`)
          const mine =
            r.token === null && r.mineMs !== null
              ? { leaseStartedAt: sent, leaseMs: Math.max(0, r.mineMs) }
              : { leaseStartedAt };
          head.settle({ fencingToken: token, fences: head.fences, queued: true, ...mine });
        }
        // The next one looks again when the new holder's lease would end (if it never releases); at once
        // after a shared or semaphore grant, which it may join.
        next = head.ttl;
        if (head.shared || head.limit > 1) queue.again = true;
      } else {
        next = r.heldMs ?? r.aheadMs ?? 50;
      }
    } catch (err) {
      if (queue.failures++ === 0) {
        // One retry: a connection the database dropped is often replaced at once.
        queue.failedAt = sent;
        next = 250;
      } else {
        queue.failures = 0;
        queue.failedAt = undefined;
        const failed = queue.waiters.splice(0);
        for (const waiter of failed) waiter.settle(err as Error);
        void this.track(this.drop(failed));
      }
    } finally {
      queue.busy = false;
    }
    if (head.leaving && queue.waiters[0] === head) {
      // It gave up while its statement was in flight, which did not grant it the key.
      queue.waiters.shift();
      void this.track(this.drop([head]).then(() => head.settle(null)));
      queue.again = true;
    }
    if (queue.waiters.length === 0) {
      this.forget(key, queue);
      return;
    }
    if (queue.again) {
      this.kick(key);
      return;
    }
    if (next !== undefined) this.arm(key, queue, next);
  }

  /** The head of `key`'s local queue looks again in `ms`. */
  private arm(key: string, queue: Queue, ms: number): void {
    arm(queue, ms, () => this.kick(key));
  }

  private forget(key: string, queue: Queue): void {
    disarm(queue);
    if (this.queues.get(key) === queue && queue.waiters.length === 0 && !queue.busy) this.queues.delete(key);
    if (this.queues.size === 0) this.tickets.stopHeartbeat();
  }

  /** Removes queue entries, and releases the keys a release granted them meanwhile (their waiters have gone). Never rejects. */
  private async drop(entries: PostgresLockEntry[]): Promise<void> {
    await this.releaseGranted(await this.tickets.drop(entries));
  }

  /** Releases keys granted to entries whose waiters have gone (owner-checked: nothing if it no longer holds them). */
  private async releaseGranted(granted: PostgresLockEntry[]): Promise<void> {
    if (granted.length > 0) await Promise.all(granted.map((e) => this.release(e.key, e.owner).catch(() => undefined)));
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise)).catch(() => undefined);
    return promise;
  }
}
