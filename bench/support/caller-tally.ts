import { now, SectionOrder } from './stats.js';

/** Wait samples a worker sends back per run, at most. */
const MAX_WAIT_SAMPLES = 50_000;

/** What the looping callers of one worker process counted in one run (scenarios 3, 6b, 9 and 10). */
export interface CallerTallies {
  sections: number;
  perCaller: number[];
  errors: number;
  maxWaitMs: number;
  waits: number[];
  /** Per wait after a caller's first: sections of other callers that ran between its previous section and this one (strict FIFO: callers − 1). */
  between: number[];
  maxBetween: number;
  elapsedMs: number;
  firstError?: string;
}

/**
 * The counts of one run of `callers` looping callers in a worker process:
 * sections, waits (from the first request to entry, across a peer's
 * give-ups and their retries), sections of others between two of a caller's
 * (told through {@link order}), and errors.
 */
export class CallerTally {
  private sections = 0;
  private errors = 0;
  private maxWaitMs = 0;
  private firstError: string | undefined;
  private readonly waits: number[] = [];
  private readonly perCaller: number[];
  private readonly started = now();
  /** Tell it each section's number in the shared order of all processes. */
  readonly order: SectionOrder;

  constructor(callers: number) {
    this.perCaller = new Array<number>(callers).fill(0);
    this.order = new SectionOrder(callers, MAX_WAIT_SAMPLES);
  }

  /**
   * Runs `attempt` (one lock call whose section calls `entered` first) until
   * its section was entered, asking again after a give-up while `deadline`
   * has not passed; counts the section for `caller`. `false`: never entered.
   */
  async enter(caller: number, deadline: number, attempt: (entered: () => void) => Promise<unknown>): Promise<boolean> {
    const requested = now();
    for (;;) {
      let entered = false;
      try {
        await attempt(() => {
          entered = true;
          const waited = now() - requested;
          this.maxWaitMs = Math.max(this.maxWaitMs, waited);
          if (this.waits.length < MAX_WAIT_SAMPLES) this.waits.push(waited);
        });
      } catch (err) {
        this.errors++;
        this.firstError ??= err instanceof Error ? err.message : String(err);
        if (!entered && now() < deadline) continue;
        if (!entered) return false;
      }
      // Entered (a release that threw still ran the section).
      this.sections++;
      this.perCaller[caller]!++;
      return true;
    }
  }

  /** The counts so far, with the time since the tally began. */
  result(): CallerTallies {
    const { sections, perCaller, errors, maxWaitMs, waits, firstError } = this;
    return {
      sections,
      perCaller,
      errors,
      maxWaitMs,
      waits,
      between: this.order.between,
      maxBetween: this.order.max,
      elapsedMs: now() - this.started,
      firstError,
    };
  }
}
