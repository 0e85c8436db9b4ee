import { now } from './clock.js';

/**
 * One timer for the whole process: each target (a list of held locks, of
 * calls in flight, an in-memory key's expiry) asks to be called back at a
 * time, and a single unref'd `setTimeout` is armed for the earliest. Taking
 * and releasing a lock therefore costs no timer of its own; a timer is
 * re-armed only when a target needs an earlier call than the one armed. @internal
 */
export interface TimerTarget {
  onTimer(): void;
}

/** The value `schedule` takes for "no call wanted". @internal */
export const NEVER = Infinity;

/** The longest delay a Node timer takes (2^31 − 1 ms, about 24.8 days); a longer one fires after 1 ms. @internal */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a timer delay: at least 0, at most {@link MAX_TIMER_MS} (a caller re-arms when it fires early). @internal */
export function timerDelay(ms: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, ms));
}

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
    this.timer = setTimeout(() => this.fire(), timerDelay(at - now()));
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

/**
 * A member of a {@link TimedList}: the list's links live on the member itself,
 * so joining and leaving the list allocate nothing and hash nothing. @internal
 */
export abstract class TimedNode {
  /** @internal */ timedDue = NEVER;
  /** @internal */ timedPrev: TimedNode | undefined = undefined;
  /** @internal */ timedNext: TimedNode | undefined = undefined;
  /** @internal */ timedList: TimedList | undefined = undefined;
  /** Called once `timedDue` has passed. */
  abstract onTimer(): void;
}

/**
 * Members that each want a call at some time (the held locks of a manager,
 * the Redis calls of a provider in flight), as an intrusive list: O(1) to add
 * and remove (every acquisition does both), walked only when the shared timer
 * fires for the earliest due member. Members stay in the list after their
 * call; only `remove` takes them out. `N`: the type of its members. @internal
 */
export class TimedList<N extends TimedNode = TimedNode> implements TimerTarget {
  private head: TimedNode | undefined;
  private armedAt = NEVER;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `node` (due at `at`), or moves its due time when it is a member already. */
  schedule(node: N, at: number): void {
    if (node.timedList !== this) {
      node.timedList = this;
      node.timedPrev = undefined;
      node.timedNext = this.head;
      if (this.head) this.head.timedPrev = node;
      this.head = node;
      this.count++;
    }
    node.timedDue = at;
    if (at < this.armedAt) {
      this.armedAt = at;
      sharedTimer.schedule(this, at);
    }
  }

  remove(node: N): void {
    if (node.timedList !== this) return;
    if (node.timedPrev) node.timedPrev.timedNext = node.timedNext;
    else this.head = node.timedNext;
    if (node.timedNext) node.timedNext.timedPrev = node.timedPrev;
    node.timedPrev = node.timedNext = node.timedList = undefined;
    node.timedDue = NEVER;
    this.count--;
  }

  /** The members, in no particular order. */
  members(): N[] {
    const out: N[] = [];
    // (every member came in through schedule(), as an N)
    for (let n = this.head; n; n = n.timedNext) out.push(n as N);
    return out;
  }

  /** @internal */
  onTimer(): void {
    this.armedAt = NEVER;
    const t = now() + 1;
    const ready: TimedNode[] = [];
    let next = NEVER;
    for (let n = this.head; n; n = n.timedNext) {
      if (n.timedDue <= t) {
        n.timedDue = NEVER;
        ready.push(n);
      } else if (n.timedDue < next) next = n.timedDue;
    }
    if (next !== NEVER) {
      this.armedAt = next;
      sharedTimer.schedule(this, next);
    }
    for (const n of ready) n.onTimer();
  }
}
