import type { QueryConfig, QueryResult } from 'pg';
import type { PostgresLockStatements } from './postgres-lock-statements.js';

/** One statement for two coalesced ones, and how its answer splits into theirs. @internal */
export interface PostgresLockFused {
  readonly config: QueryConfig;
  /** The answers of the two statements it stands for, from its own. */
  split(result: QueryResult): [QueryResult, QueryResult];
}

/** The columns of release.sql's answer. */
const RELEASE_COLUMNS = ['live', 'next', 'notified'] as const;
/** The columns of acquire.sql's answer. */
const ACQUIRE_COLUMNS = ['token', 'ticket', 'mine', 'held_ms', 'ahead_ms', 'conflict', 'now_ms', 'mine_ms'] as const;

/**
 * A release and the queueing statement of the same process's next waiter,
 * coalesced (`LockProvider.coalesce`), sent as one statement:
 * `statements/release-queue.sql`, one round trip and one commit (one WAL
 * flush) where the two took two in a row.
 * @internal
 */
export class PostgresLockReleaseQueue {
  constructor(
    private readonly sql: Pick<PostgresLockStatements, 'release' | 'acquire' | 'releaseQueue'>,
    /** The prepared statement's name of release-queue.sql, if statements are prepared. */
    private readonly name: string | undefined,
  ) {}

  /**
   * The statement for `first` then `second` when they are release.sql and
   * acquire.sql's first attempt that queues, on the same name; else undefined
   * (they run as they are).
   */
  fuse(first: QueryConfig, second: QueryConfig): PostgresLockFused | undefined {
    if (first.text !== this.sql.release || second.text !== this.sql.acquire) return undefined;
    // release.sql: $1 name, $2 owner, $3 channel; acquire.sql: $1 name, $2 owner, $3 ttl, $4 ticket, $5 waiter lease, $6 fences, $7 direct lease.
    const [name, owner, channel] = first.values ?? [];
    const [key, next, ttl, ticket, lease, fences, direct] = second.values ?? [];
    if (name !== key || ticket !== null || lease === null || lease === undefined) return undefined;
    const config = {
      ...first,
      name: this.name,
      text: this.sql.releaseQueue,
      values: [name, owner, channel, next, ttl, lease, fences, direct],
    } as QueryConfig;
    return {
      config,
      split: (result) => {
        const row = result.rows[0] ?? {};
        const pick = (columns: readonly string[]): Record<string, unknown> =>
          Object.fromEntries(columns.map((c) => [c, row[c]]));
        const released = row.released === true ? [pick(RELEASE_COLUMNS)] : [];
        return [
          { ...result, rows: released, rowCount: released.length },
          { ...result, rows: [pick(ACQUIRE_COLUMNS)], rowCount: 1 },
        ];
      },
    };
  }
}
