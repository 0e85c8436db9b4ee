/**
 * One lock implementation as the scenarios see it: `withLock` waits until it
 * holds the lock (however the implementation waits: polling, retries, or a
 * wake-up on release), runs `fn`, releases. It rejects when the implementation
 * gives up (a peer whose retries ran out); the scenarios count that as an error.
 */
export interface LockClient {
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Where the stores of this run live. */
export interface BenchEnv {
  /** The bench's own redis-server (a free port), so `INFO stats` counts only bench traffic. */
  readonly redisUrl: string;
  readonly pgUrl: string;
  /** MySQL / MariaDB of scenario 6's MySQL rows (`BENCH_MYSQL_URL`). */
  readonly mysqlUrl: string;
  /** Lease for every contender, in ms: long enough that no section ever outlives it. */
  readonly ttl: number;
}

export type Store = 'redis' | 'postgres' | 'mysql' | 'memory';

export interface Contender {
  /** Stable id, used on the command line, in worker processes and in the JSON. */
  readonly id: string;
  /** Name in the table. */
  readonly label: string;
  readonly store: Store;
  /**
   * `ours` (this library), `raw` (the hand-written baseline), `peer`, or
   * `reference` (no lock at all: a ceiling, never a ratio's base).
   */
  readonly kind: 'ours' | 'raw' | 'peer' | 'reference';
  /**
   * `default`: the peer's documented default retry settings; `tuned`: a 10 ms
   * retry; `-`: not applicable (ours wakes waiters on release; raw polls every 1 ms).
   */
  readonly retry: 'default' | 'tuned' | '-';
  /** How it waits, for the table's legend. */
  readonly waits: string;
  /**
   * `@opentelemetry/api` in this contender's process (scenarios run by the
   * cycles pool): `hidden`, as if not installed (no `@opentelemetry/*`
   * package can be loaded); `loaded`, checked to be loaded once the
   * contender is created. Unset: whatever the contender loads.
   */
  readonly openTelemetryApi?: 'hidden' | 'loaded';
  create(env: BenchEnv): Promise<LockClient>;
}

export const DEFAULT_BENCH_TTL = 10_000;

/** Retry wording shared by the two redlock flavours (same documented defaults, same tuned settings). */
export const REDLOCK_WAITS = {
  default: 'retries 10 × 200 ± 100 ms, then throws',
  tuned: 'retries every 10 ± 5 ms, no limit',
} as const;

/** Tuned retry settings of both redlock flavours: a 10 ms retry, without limit. */
export const REDLOCK_TUNED = { retryCount: -1, retryDelay: 10, retryJitter: 5 } as const;

/** A peer on Redis at one retry setting. */
export function redisPeer(
  id: string,
  label: string,
  retry: 'default' | 'tuned',
  waits: string,
  create: Contender['create'],
): Contender {
  return { id: `${id}-${retry}`, label, store: 'redis', kind: 'peer', retry, waits, create };
}
