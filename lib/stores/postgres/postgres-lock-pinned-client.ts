import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';
import type { PostgresLockReleaseQueue } from './postgres-lock-release-queue.js';

/** A statement issued inside the coalesced call, and how to answer it. */
interface Issued {
  readonly config: QueryConfig;
  readonly resolve: (result: QueryResult) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The statements of one `LockProvider.coalesce` (a release, then the
 * queueing statement of this process's next waiter): they run in the order
 * they were issued on one connection of the pool, checked out once all are
 * issued and given back after the last. So the ticket follows the release
 * at once instead of racing it on another connection, where the process
 * that the release woke could run its turn and queue again first. A release
 * and a queueing first attempt on the same name go as one statement
 * ({@link PostgresLockReleaseQueue}): one round trip and one commit.
 * @internal
 */
export class PostgresLockPinnedClient {
  private readonly issued: Issued[] = [];
  private pool: Promise<Pool> | undefined;

  constructor(private readonly releaseQueue: PostgresLockReleaseQueue) {}

  /** Adds `config` to the statements to run, after those issued before it; answers its result. */
  run(pool: Promise<Pool>, config: QueryConfig): Promise<QueryResult> {
    this.pool ??= pool;
    return new Promise<QueryResult>((resolve, reject) => this.issued.push({ config, resolve, reject }));
  }

  /** No more statements: runs the issued ones. */
  seal(): void {
    const issued = this.issued.splice(0);
    if (issued.length > 0 && this.pool) void this.send(this.pool, issued);
  }

  private async send(pool: Promise<Pool>, issued: readonly Issued[]): Promise<void> {
    let client: PoolClient;
    try {
      client = await (await pool).connect();
    } catch (err) {
      for (const s of issued) s.reject(err);
      return;
    }
    let broken = false;
    try {
      const [first, second] = issued;
      const fused = issued.length === 2 ? this.releaseQueue.fuse(first!.config, second!.config) : undefined;
      if (fused) {
        try {
          const [released, queued] = fused.split(await client.query(fused.config));
          first!.resolve(released);
          second!.resolve(queued);
          return;
        } catch (err) {
          // An error the server answered (the statement took no effect): each runs on its own below; else both fail.
          if (typeof (err as { code?: unknown }).code !== 'string') {
            broken = true;
            for (const s of issued) s.reject(err);
            return;
          }
        }
      }
      for (const s of issued) {
        try {
          s.resolve(await client.query(s.config));
        } catch (err) {
          broken = true;
          s.reject(err);
        }
      }
    } finally {
      // (after a failed statement the connection may be unusable: the pool drops it and opens another when needed)
      client.release(broken || undefined);
    }
  }
}
