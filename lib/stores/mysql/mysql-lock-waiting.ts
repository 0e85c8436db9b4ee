import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { MysqlLockDatabase } from './mysql-lock-database.js';
import { fitsHolders, liveHolders, mysqlLockAsk } from './mysql-lock-holders.js';
import type { MysqlLockStatements } from './mysql-lock-tables.js';

/** What one acquire attempt found: the fencing token when granted, else `null`. @internal */
export interface MysqlLockAttempt {
  readonly token: number | null;
  /** A shared hold or a permit: the waiter behind a granted one may enter too. */
  readonly group?: boolean;
}

/** The store calls a waiter makes: one attempt, with its ticket or none. @internal */
export type MysqlLockAttemptFn = (request: LockAcquireRequest, ticket: number | null) => Promise<MysqlLockAttempt>;

/** The watcher's shortest and longest pause between two looks at the queues, in ms. */
export const WATCH_MIN_MS = 2;
export const WATCH_MAX_MS = 100;

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

  /** A waiting acquire: a first attempt, then a ticket, then an attempt each time the watcher (or a local release) wakes it. */
  acquire(request: LockAcquireRequest): Promise<LockGrant | null> {
    const run = this.wait(request);
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

  private async wait(request: LockAcquireRequest): Promise<LockGrant | null> {
    const { key } = request;
    const deadline = request.waitTimeout === undefined ? Infinity : performance.now() + request.waitTimeout;
    const first = await this.database.bounded('acquire', key, () => this.attempt(request, null));
    if (first.token !== null) return { fencingToken: first.token };
    const ticket = await this.database.bounded('acquire', key, () => this.enqueue(request));
    const waiter = new LocalWaiter(key, ticket);
    this.watch(waiter);
    let granted = false;
    let chain = false;
    try {
      for (;;) {
        const startedAt = performance.now();
        const got = await this.database.bounded('acquire', key, () => this.attempt(request, ticket));
        if (got.token !== null) {
          granted = true;
          chain = got.group === true;
          return { fencingToken: got.token, queued: true, leaseStartedAt: startedAt };
        }
        if ((await waiter.next(deadline, request.signal)) !== 'wake') return null;
      }
    } finally {
      this.unwatch(waiter);
      // The row goes either way; a granted waiter's next one here may be the new head.
      await this.database
        .bounded('dequeue', key, () => this.database.write(this.sql.dequeue, [ticket]))
        .catch(() => undefined);
      // A shared hold or a permit granted: the next waiter here may fit beside it.
      if (!granted || chain) this.released(key);
    }
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
        if (this.seen.get(key) !== seen) changed = true;
        this.seen.set(key, seen);
        if (heldMs > 0) {
          soonest = Math.min(soonest, heldMs + 1);
          continue;
        }
        const mine = [...(this.byKey.get(key) ?? [])].find((w) => w.ticket === head);
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
