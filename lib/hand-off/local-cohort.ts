import { CohortLine } from './cohort-line.js';

/**
 * What the plain lock's and the semaphore's cohorts share: the callers of
 * one process for one key, waiting here or at the store, and who goes to
 * the store when a store acquisition ends. @internal
 */
export abstract class LocalCohort<W> {
  /** The callers waiting here, and those at the store. */
  readonly line = new CohortLine<W>();

  constructor(readonly key: string) {}

  /** Whether a waiter is queued here. */
  get queued(): boolean {
    return this.line.queued;
  }

  /** A caller goes to queue at the store. */
  toStore(): void {
    this.line.atStore++;
  }

  /**
   * A caller's store acquisition ended: granted (after the grant was
   * registered), timed out, or failed (see {@link CohortLine.fromStore}).
   * Answers the waiters that go to queue at the store now (counted there already).
   */
  fromStore(failed: boolean): readonly W[] {
    const sent = this.line.fromStore(failed);
    const next = this.advance();
    return next === undefined ? sent : [...sent, next];
  }

  /** The waiter that goes to queue at the store now that nobody of this process holds the key or is there, if any (counted there). */
  protected abstract advance(): W | undefined;
}
