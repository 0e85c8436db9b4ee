/** How fast the two clocks may drift apart, at most (1 ms per second, far more than NTP lets a clock slew). */
const DRIFT = 1e-3;

/**
 * This process's view of the database clock, for grants that a release made
 * on a waiter's behalf: their lease started at a database time, and the
 * waiter needs a local (`performance.now()`) time no later than that start.
 * Each statement sent at local time `s` that read the database clock `d`
 * shows that database time `d` came after `s`: local time is at least
 * `d + (s - d)`. The best such bound is kept, and loosened as it ages by the
 * most the clocks may drift.
 * @internal
 */
export class PostgresLockClock {
  /** `s - d` of the best sample, and when it was sent. */
  private offset?: number;
  private sentAt = 0;

  /** A statement sent at `sentAt` (`performance.now()`) read `databaseMs` (epoch ms) on the database clock. */
  sample(sentAt: number, databaseMs: unknown): void {
    const d = Number(databaseMs);
    if (databaseMs === null || databaseMs === undefined || !Number.isFinite(d)) return;
    const offset = sentAt - d;
    if (this.offset === undefined || offset >= this.bound(sentAt)) {
      this.offset = offset;
      this.sentAt = sentAt;
    }
  }

  /** A `performance.now()` time no later than database time `databaseMs` (epoch ms), or `undefined` before any sample. */
  localTime(databaseMs: number): number | undefined {
    return this.offset === undefined ? undefined : databaseMs + this.bound(performance.now());
  }

  /** The local time no later than the start of a lease that started at database time `databaseMs`, nor than now. */
  leaseStart(databaseMs: number): number | undefined {
    const start = this.localTime(databaseMs);
    return start === undefined ? undefined : Math.min(start, performance.now());
  }

  /** The best offset, loosened by the drift since it was measured. */
  private bound(at: number): number {
    return this.offset! - DRIFT * Math.max(0, at - this.sentAt);
  }
}
