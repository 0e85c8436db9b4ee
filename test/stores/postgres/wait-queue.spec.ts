/** The pure pieces of PostgreSQL waiting: when a new waiter looks again, a direct grant's payload, the local start of its lease. */
import { PostgresLockClock } from '../../../lib/stores/postgres/postgres-lock-clock.js';
import { directGrantOf, recheckAfter } from '../../../lib/stores/postgres/postgres-lock-wait-queue.js';

describe('recheckAfter: a NOTIFY heard while the queueing statement was in flight', () => {
  test('none heard: when the answer says', () => {
    expect(recheckAfter([], '10', 1_234, 5_000)).toBe(1_234);
  });

  test('one that may be meant for it (no ticket, its own, a later one): at once', () => {
    expect(recheckAfter([''], '10', 1_234, 5_000)).toBe(0);
    expect(recheckAfter(['10,4000'], '10', 1_234, 5_000)).toBe(0);
    expect(recheckAfter(['9,4000', '11,4000'], '10', 1_234, 5_000)).toBe(0);
  });

  test('one naming an earlier ticket: that waiter has the turn; this one looks again by the time its lease would lapse', () => {
    expect(recheckAfter(['9,700'], '10', 1_234, 5_000)).toBe(700);
    expect(recheckAfter(['9,4000'], '10', 1_234, 5_000)).toBe(1_234);
    expect(recheckAfter(['9,4000,123,1700000000000.5'], '10', 9_000, 5_000)).toBe(4_000); // a direct grant to it
    expect(recheckAfter(['9,x'], '10', 9_000, 5_000)).toBe(5_000);
  });
});

describe('directGrantOf', () => {
  test('reads <ticket>,<ms>,<token>,<at>; a plain <ticket>,<ms> or junk names none', () => {
    expect(directGrantOf('12,5000,1764751234567890,1764751234567.25')).toEqual({
      ticket: '12',
      leaseMs: 5_000,
      fencingToken: 1764751234567890,
      at: 1764751234567.25,
    });
    expect(directGrantOf('12,5000')).toBeUndefined();
    expect(directGrantOf('')).toBeUndefined();
    expect(directGrantOf('12,5000,x,1')).toBeUndefined();
  });
});

describe('PostgresLockClock', () => {
  test('no sample: no local time', () => {
    expect(new PostgresLockClock().localTime(1_000)).toBeUndefined();
  });

  test('a database time maps to a local time no later than the real one: the best (latest-sent) sample bounds it', () => {
    const clock = new PostgresLockClock();
    const t = performance.now();
    // The database clock runs 1e12 ms ahead of performance.now(); statements read it 0.5 ms and 3 ms after they were sent.
    clock.sample(t - 10, t - 10 + 1e12 + 3);
    clock.sample(t - 5, t - 5 + 1e12 + 0.5);
    clock.sample(t - 1, null);
    const local = clock.localTime(t + 1e12)!;
    expect(local).toBeLessThanOrEqual(t);
    expect(local).toBeGreaterThan(t - 0.6);
    // A lease start is never later than now.
    expect(clock.leaseStart(t + 1e12 + 60_000)).toBeLessThanOrEqual(performance.now());
  });
});
