import { now } from '../../shared/clock.js';
import type { KeyState } from './key-state.js';

/** How often, in ms, the in-memory store drops the keys nobody holds or awaits: the longest they stay. @internal */
export const IDLE_SWEEP_MS = 1_000;

/**
 * The in-memory store's one sweep timer: while its map has keys, every
 * {@link IDLE_SWEEP_MS} it drops the keys that nobody awaits and whose
 * holders all left (released, or their lease ran out unreleased). Unref'd,
 * stopped when the map is empty; a lock itself arms no timer. @internal
 */
export class IdleSweep {
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(private readonly entries: Map<string, KeyState>) {}

  /** A key was added to the map: sweeps from now on, while keys are left. */
  watch(): void {
    if (this.timer === undefined) this.schedule();
  }

  /** Stops sweeping (the store closes). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.sweep(), IDLE_SWEEP_MS);
    this.timer.unref?.();
  }

  private sweep(): void {
    this.timer = undefined;
    const t = now();
    for (const [key, entry] of this.entries) {
      if (entry.waiters.length > 0) continue; // a queue has its own timer and settles itself
      entry.prune(t);
      if (entry.owner === undefined) this.entries.delete(key);
    }
    if (this.entries.size > 0) this.schedule();
  }
}
