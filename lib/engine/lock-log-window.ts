/** Most keys a window counts at once; past it, new keys are dropped silently until the window ends. */
const MAX_KEYS = 1_024;

/**
 * Keeps repeated log lines out of the log: the first line of a key in an
 * interval is logged, the repeats are counted and summarized when the
 * interval ends (see docs/engine.md, "Logs"). @internal
 */
export class LogWindow {
  private counts = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly summarize: (key: string, repeats: number, seconds: number) => void,
  ) {}

  /** `true` when this is the first line of `key` in the current interval (log it); else counts it. */
  first(key: string): boolean {
    const n = this.counts.get(key);
    if (n !== undefined) {
      this.counts.set(key, n + 1);
      return false;
    }
    if (this.counts.size >= MAX_KEYS) return false;
    this.counts.set(key, 0);
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), this.intervalMs);
      this.timer.unref?.();
    }
    return true;
  }

  /** Ends the interval: reports every key that repeated. */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const counts = this.counts;
    this.counts = new Map();
    for (const [key, repeats] of counts)
      if (repeats > 0) this.summarize(key, repeats, Math.round(this.intervalMs / 1000));
  }
}
