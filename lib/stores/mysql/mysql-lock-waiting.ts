import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { MysqlLockDatabase } from './mysql-lock-database.js';
import { fitsHolders, liveHolders, mysqlLockAsk } from './mysql-lock-holders.js';
import type { MysqlLockStatements } from './mysql-lock-tables.js';

/** What one acquire attempt found: the fencing token when granted, else `null`. @internal */
export interface MysqlLockAttempt {
  readonly token: number | null;
  /** Fencing tokens the grant reserved, `token` the first (absent: 1). */
  readonly fences?: number;
  /** A shared hold or a permit: the waiter behind a granted one may enter too. */
  readonly group?: boolean;
}

/** The store calls a waiter makes: one attempt, with its ticket or none. @internal */
export type MysqlLockAttemptFn = (request: LockAcquireRequest, ticket: number | null) => Promise<MysqlLockAttempt>;

/** The watcher's shortest and longest pause between two looks at the queues, in ms. */
export const WATCH_MIN_MS = 2;
export const WATCH_MAX_MS = 100;
/**
 * The pause while a waiter of this process heads a held name's queue and the
 * name changed lately (see {@link NEXT_IN_LINE_MS}): the lock comes to it next.
 */
export const NEXT_IN_LINE_LOOK_MS = 1;
/**
 * How long after a name last changed its next-in-line process keeps looking
 * every {@link NEXT_IN_LINE_LOOK_MS}: twice the time between its last two
 * changes (about one holder's turn), at least 50 ms and at most 1 s; then it
 * backs off as the other processes do.
 */
export const NEXT_IN_LINE_MS = { min: 50, max: 1_000 } as const;

/** How a wait for the next look ended. */
type Wake = 'wake' | 'timeout' | 'abort' | 'closed';

/** One queued caller of this process: its ticket, and the promise it waits on until woken. */
class LocalWaiter {
  private woken = false;
  private resolve?: (how: Wake) => void;
  private ended?: Wake;

  constructor(
    readonly key: string,
    readonly ticket: number,
  ) {}

  /** Asks the waiter to try again (kept when it is trying now: it tries once more). */
  wake(how: Wake = 'wake'): void {
    if (how !== 'wake') this.ended ??= how;
    this.woken = true;
    this.resolve?.(this.ended ?? 'wake');
  }

  /** Until woken, `deadline` (performance.now() time) passes or `signal` aborts. */
  next(deadline: number, signal: AbortSignal | undefined): Promise<Wake> {
    // An abort while the waiter was trying (its listener not yet added) is not missed.
    if (signal?.aborted) this.ended ??= 'abort';
    if (this.ended) return Promise.resolve(this.ended);
    if (this.woken) {
      this.woken = false;
      return Promise.resolve('wake');
    }
    return new Promise<Wake>((resolve) => {
      const timer =
        deadline === Infinity
          ? undefined
          : setTimeout(() => this.wake('timeout'), Math.max(0, deadline - performance.now()));
      const onAbort = (): void => this.wake('abort');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.resolve = (how) => {
        this.resolve = undefined;
        this.woken = false;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(how);
      };
    });
  }
}

/**
 * The queued waiters of one provider, and their wake-up. MySQL has no
 * LISTEN/NOTIFY: each waiter has a row (a ticket) in the waiters table, and
 * one watcher per provider looks at every name its waiters wait for in one
 * statement, wakes the waiter whose ticket heads a free name's queue, and
 * renews the waiters' rows. It looks again after 2 ms while the queues move,
 * backing off to 100 ms while nothing changes, and at the holder's lease end.
 * A release by this process wakes its next waiter of that name at once.
 * @internal
 */
export class MysqlLockWaiting {
  private readonly byKey = new Map<string, Set<LocalWaiter>>();
  private readonly running = new Set<Promise<unknown>>();
  /** What the last look saw per name (token, head, held): a change resets the pause. */
  private readonly seen = new Map<string, string>();
  /** When each name last changed (performance.now()), as the looks saw it, and the time between its last two changes. */
  private readonly moved = new Map<string, { readonly at: number; readonly gap: number }>();
  private readonly lastPrune = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pause = WATCH_MIN_MS;
  private looking = false;
  private lastBeat = performance.now();
  private closed = false;

  constructor(
    private readonly database: MysqlLockDatabase,
    private readonly sql: MysqlLockStatements,
    private readonly attempt: MysqlLockAttemptFn,
    /** How long a waiter's row lives unless renewed, in ms. */
    private readonly waiterLease: number,
  ) {}

  /**
   * A waiting acquire: a first attempt, then a ticket, then an attempt each
   * time the watcher (or a local release) wakes it. `behind`: waiters are
   * queued for the name (a release just freed it for them): it takes its
   * ticket at once, and tries when woken.
   */
  acquire(request: LockAcquireRequest, behind = false): Promise<LockGrant | null> {
    const run = this.wait(request, behind);
    this.running.add(run);
    void run.finally(() => this.running.delete(run)).catch(() => undefined);
    return run;
  }

  /** A lock of `key` was freed by this process: its first waiter here tries now, and the watcher looks soon. */
  released(key: string): void {
    this.first(key)?.wake();
    this.extended(key);
  }

  /** A lease of `key` was set anew by this process (perhaps shorter): the watcher looks again soon, at the new lease end. */
  extended(key: string): void {
    if (!this.byKey.has(key)) return;
    this.pause = WATCH_MIN_MS;
    if (!this.looking) this.schedule(WATCH_MIN_MS);
  }

  /** Resolves every waiter `null` (their rows are deleted) and stops the watcher. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    for (const set of this.byKey.values()) for (const w of set) w.wake('closed');
    await Promise.allSettled([...this.running]);
  }

  private async wait(request: LockAcquireRequest, behind: boolean): Promise<LockGrant | null> {
    const { key } = request;
    const deadline = request.waitTimeout === undefined ? Infinity : performance.now() + request.waitTimeout;
    if (!behind) {
      const first = await this.database.bounded('acquire', key, () => this.attempt(request, null));
      if (first.token !== null) return { fencingToken: first.token, fences: first.fences ?? 1 };
    }
    const ticket = await this.database.bounded('acquire', key, () => this.enqueue(request));
    const waiter = new LocalWaiter(key, ticket);
    this.watch(waiter);
    let granted = false;
    let chain = false;
    try {
      for (let tries = 0; ; tries++) {
        // Queued behind waiters: the watcher wakes it when it heads the line.
        if (behind && tries === 0 && (await waiter.next(deadline, request.signal)) !== 'wake') return null;
        const startedAt = performance.now();
        const got = await this.database.bounded('acquire', key, () => this.attempt(request, ticket));
        if (got.token !== null) {
          granted = true;
          chain = got.group === true;
          return { fencingToken: got.token, fences: got.fences ?? 1, queued: true, leaseStartedAt: startedAt };
        }
        if ((await waiter.next(deadline, request.signal)) !== 'wake') return null;
      }
    } finally {
      this.unwatch(waiter);
      const dequeued = this.dequeue(key, ticket);
      if (!granted || chain) {
        // The row goes first: this process's next waiter may be the new head (or fit beside a shared hold or a permit).
        await dequeued;
        this.released(key);
      }
      // A plain grant does not wait for its row to go: it heads the queue of a name it holds until then (see dequeue).
    }
  }

  /**
   * Deletes a waiter's queue entry; tracked until done (close awaits it).
   * While a granted waiter's entry is there, it is the first in line: no
   * other waiter nor try takes the name meanwhile, which it holds anyway.
   */
  private dequeue(key: string, ticket: number): Promise<unknown> {
    const run = this.database
      .bounded('dequeue', key, () => this.database.write(this.sql.dequeue, [ticket]))
      .catch(() => undefined);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
    return run;
  }

  /** A new ticket for `key`; now and then, the name's long-dead queue entries go first. */
  private async enqueue(request: LockAcquireRequest): Promise<number> {
    const { key, owner } = request;
    const ask = mysqlLockAsk(request);
    const now = performance.now();
    if ((this.lastPrune.get(key) ?? -Infinity) < now - 60_000) {
      if (this.lastPrune.size > 1_000) this.lastPrune.clear();
      this.lastPrune.set(key, now);
      await this.database.write(this.sql.pruneWaiters, [key]);
    }
    const r = await this.database.write(this.sql.enqueue, [
      key,
      owner,
      Math.round(this.waiterLease * 1000),
      ask.shared ? 'shared' : 'exclusive',
      ask.limit,
    ]);
    return Number(r.insertId);
  }

  private watch(waiter: LocalWaiter): void {
    let set = this.byKey.get(waiter.key);
    if (!set) this.byKey.set(waiter.key, (set = new Set()));
    set.add(waiter);
    this.pause = WATCH_MIN_MS;
    if (this.timer === undefined && !this.looking) this.schedule(WATCH_MIN_MS);
  }

  private unwatch(waiter: LocalWaiter): void {
    const set = this.byKey.get(waiter.key);
    set?.delete(waiter);
    if (set?.size === 0) {
      this.byKey.delete(waiter.key);
      this.seen.delete(waiter.key);
      this.moved.delete(waiter.key);
    }
  }

  /** This process's waiter of `key` with the earliest ticket. */
  private first(key: string): LocalWaiter | undefined {
    let best: LocalWaiter | undefined;
    for (const w of this.byKey.get(key) ?? []) if (best === undefined || w.ticket < best.ticket) best = w;
    return best;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = this.closed || this.byKey.size === 0 ? undefined : setTimeout(() => void this.look(), Math.max(0, ms));
  }

  /** One look at every name waited for: wakes the waiters that head a free name, renews the rows, and plans the next look. */
  private async look(): Promise<void> {
    this.timer = undefined;
    if (this.closed || this.byKey.size === 0) return;
    this.looking = true;
    let soonest = Infinity;
    const at = performance.now();
    try {
      if (performance.now() - this.lastBeat > this.waiterLease / 3) await this.heartbeat();
      const keys = [...this.byKey.keys()];
      const rows = await this.database.bounded('watch', undefined, () =>
        this.database.read(this.sql.watch, [JSON.stringify(keys)]),
      );
      let changed = false;
      const found = new Set<string>();
      for (const row of rows) {
        const key = Buffer.isBuffer(row.name) ? row.name.toString('utf8') : String(row.name);
        found.add(key);
        const head = row.head === null ? null : Number(row.head);
        const nowUs = Number(row.now_us);
        const live = liveHolders(row.holders, nowUs);
        const ask = {
          shared: row.head_mode === 'shared',
          limit: row.head_permits === null ? 1 : Number(row.head_permits),
        };
        // Held for the head: by a plain holder's lease, or by group holders it does not fit beside (until the first of their leases ends).
        const groupMs =
          live.length === 0 || fitsHolders(live, row.permits === null ? null : Number(row.permits), ask)
            ? 0
            : Math.min(...live.map((h) => h.e - nowUs)) / 1_000;
        const heldMs = Math.max(Number(row.held_us) / 1_000, groupMs);
        const seen = `${String(row.token)} ${String(head)} ${heldMs > 0} ${live.length}`;
        if (this.seen.get(key) !== seen) {
          changed = true;
          const last = this.moved.get(key);
          this.moved.set(key, { at, gap: last === undefined ? 0 : at - last.at });
        }
        this.seen.set(key, seen);
        const mine = [...(this.byKey.get(key) ?? [])].find((w) => w.ticket === head);
        if (heldMs > 0) {
          // Next in line for a lock that changes hands: look again at once, to take it as soon as it is freed.
          const moved = this.moved.get(key);
          const window = Math.min(NEXT_IN_LINE_MS.max, Math.max(NEXT_IN_LINE_MS.min, 2 * (moved?.gap ?? 0)));
          const nextInLine = mine !== undefined && moved !== undefined && at - moved.at < window;
          soonest = Math.min(soonest, heldMs + 1, nextInLine ? NEXT_IN_LINE_LOOK_MS : Infinity);
          continue;
        }
        (head === null ? this.first(key) : mine)?.wake();
      }
      for (const key of keys) if (!found.has(key)) this.first(key)?.wake(); // no row yet: its first attempt creates it
      this.pause = changed ? WATCH_MIN_MS : Math.min(WATCH_MAX_MS, this.pause * 2);
    } catch {
      this.pause = WATCH_MAX_MS; // the waiters' own attempts report the failure
    } finally {
      this.looking = false;
      this.schedule(Math.min(soonest, this.pause));
    }
  }

  /** Renews the rows of every waiter of this process. */
  private async heartbeat(): Promise<void> {
    this.lastBeat = performance.now();
    const tickets = [...this.byKey.values()].flatMap((set) => [...set].map((w) => w.ticket));
    await this.database.bounded('heartbeat', undefined, () =>
      this.database.write(this.sql.heartbeat, [JSON.stringify(tickets), Math.round(this.waiterLease * 1000)]),
    );
  }
}
