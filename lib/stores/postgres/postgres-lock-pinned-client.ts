import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';

/**
 * The statements of one `LockProvider.coalesce` (a release, then the
 * queueing statement of this process's next waiter): they run in the order
 * they were issued on one connection of the pool, checked out at the first
 * of them and given back after the last. So the release has committed
 * before the next waiter takes its ticket, and the ticket follows it at
 * once instead of racing it on another connection, where the process that
 * the release woke could run its turn and queue again first.
 * @internal
 */
export class PostgresLockPinnedClient {
  private client: Promise<PoolClient> | undefined;
  private pending = 0;
  private sealed = false;
  private broken = false;

  /** Runs `config` on the pinned connection, after the statements issued before it. */
  run(pool: Promise<Pool>, config: QueryConfig): Promise<QueryResult> {
    this.pending++;
    const client = (this.client ??= pool.then((p) => p.connect()));
    const result = client.then((c) => c.query(config));
    result.then(
      () => this.settled(false),
      () => this.settled(true),
    );
    return result;
  }

  /** No more statements: the connection goes back to the pool once the issued ones are done. */
  seal(): void {
    this.sealed = true;
    if (this.pending === 0) this.giveBack();
  }

  private settled(failed: boolean): void {
    if (failed) this.broken = true;
    if (--this.pending === 0 && this.sealed) this.giveBack();
  }

  private giveBack(): void {
    // (after a failed statement the connection may be unusable: the pool drops it and opens another when needed)
    const broken = this.broken;
    this.client?.then(
      (c) => c.release(broken || undefined),
      () => undefined,
    );
    this.client = undefined;
  }
}
