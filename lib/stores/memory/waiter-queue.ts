/** The array of every empty queue that never had a waiter (never written to). */
const NO_WAITERS: never[] = [];

/**
 * The FIFO queue of a key at the in-memory store: an array with a moving head, so that a grant to
 * the head costs O(1) however many wait behind it (`Array.shift` moves every
 * element). Leaving from the middle (a timeout, an abort) is O(n). @internal
 */
export class WaiterQueue<W> {
  /** Shared by every empty queue until its first push: most keys never queue anyone. */
  private items: (W | undefined)[] = NO_WAITERS;
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** The head of the queue. */
  first(): W | undefined {
    return this.items[this.head];
  }

  push(waiter: W): void {
    if (this.items === NO_WAITERS) this.items = [];
    this.items.push(waiter);
  }

  /** Takes the head off the queue. */
  shift(): W | undefined {
    const items = this.items;
    if (this.head === items.length) return undefined;
    const waiter = items[this.head];
    items[this.head++] = undefined;
    if (this.head === items.length) {
      items.length = 0;
      this.head = 0;
    } else if (this.head >= 1_024 && this.head * 2 >= items.length) {
      // Compacts once the taken slots are the larger half: O(1) per shift over time.
      items.splice(0, this.head);
      this.head = 0;
    }
    return waiter;
  }

  /** Takes `waiter` out of the queue; `false` when it is not in it. */
  remove(waiter: W): boolean {
    const i = this.items.indexOf(waiter, this.head);
    if (i < 0) return false;
    this.items.splice(i, 1);
    if (this.head === this.items.length) this.clear();
    return true;
  }

  /** Empties the queue; returns what it held, in order. */
  drain(): W[] {
    const all = this.items.slice(this.head) as W[];
    this.clear();
    return all;
  }

  *[Symbol.iterator](): IterableIterator<W> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i]!;
  }

  private clear(): void {
    this.items = NO_WAITERS;
    this.head = 0;
  }
}
