/**
 * One timer for every held lock of the process: each lock asks to be called
 * back at a time, and a single unref'd `setTimeout` is armed for the earliest.
 * Taking and releasing a lock therefore costs no timer of its own; a timer is
 * re-armed only when a lock needs an earlier call than the one armed. @internal
 */
export interface TimerTarget {
  onTimer(): void;
}

const MAX_TIMER = 2 ** 31 - 1;
const now = (): number => performance.now();

class SharedTimer {
  private readonly due = new Map<TimerTarget, number>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedAt = Infinity;

  /** Calls `target.onTimer()` at `at` (performance.now() time), replacing an earlier request. */
  schedule(target: TimerTarget, at: number): void {
    this.due.set(target, at);
    if (at < this.armedAt) this.arm(at);
  }

  cancel(target: TimerTarget): void {
    this.due.delete(target);
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER, Math.max(0, at - now())));
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const t = now() + 1;
    const ready: TimerTarget[] = [];
    let next = Infinity;
    for (const [target, at] of this.due) {
      if (at <= t) ready.push(target);
      else if (at < next) next = at;
    }
    for (const target of ready) this.due.delete(target);
    if (next !== Infinity) this.arm(next);
    for (const target of ready) target.onTimer();
  }
}

/** @internal */
export const sharedTimer = new SharedTimer();
