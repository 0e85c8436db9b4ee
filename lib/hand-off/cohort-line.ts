/** No waiter to send. */
const NONE: readonly never[] = [];

/**
 * The callers of one process for one key that wait in the process, in
 * arrival order, and the count of its callers queued at the store: what the
 * plain lock's and the semaphore's cohorts share. @internal
 */
export class CohortLine<W> {
  /** Callers queued at the store (one, or more after a store failure sent them all there). */
  atStore = 0;
  /** Created by the first waiter: most cohorts are one uncontended caller. */
  private queue: W[] | undefined;

  /** Whether a waiter is queued here. */
  get queued(): boolean {
    return this.queue !== undefined && this.queue.length > 0;
  }

  /** The waiters queued here, oldest first (for shutdown and inspection). */
  get waiting(): readonly W[] {
    return this.queue ?? [];
  }

  /** The oldest waiter, if any. */
  get first(): W | undefined {
    return this.queue?.[0];
  }

  /** Queues a waiter behind the others. */
  enqueue(waiter: W): void {
    (this.queue ??= []).push(waiter);
  }

  /** A waiter left (timeout, abort, shutdown); `false` if it was no longer queued here. */
  remove(waiter: W): boolean {
    const i = this.queue?.indexOf(waiter) ?? -1;
    if (i < 0) return false;
    this.queue!.splice(i, 1);
    return true;
  }

  /** Takes the oldest waiter out. */
  shift(): W | undefined {
    return this.queue?.shift();
  }

  /** Takes the youngest waiter out. */
  pop(): W | undefined {
    return this.queue?.pop();
  }

  /**
   * A caller's store acquisition ended. After a failure the store may be
   * down: every waiter goes to the store on its own (counted there, and
   * returned for the caller to send), so each fails (or succeeds) within its
   * own bounded call instead of one after the other.
   */
  fromStore(failed: boolean): readonly W[] {
    this.atStore--;
    if (!failed || this.queue === undefined || this.queue.length === 0) return NONE;
    const sent = this.queue.splice(0);
    this.atStore += sent.length;
    return sent;
  }
}
