import { InMemoryLockProvider } from '../../../lib/index.js';
import { WaiterQueue } from '../../../lib/stores/memory/waiter-queue.js';

/**
 * The in-memory store's queue and expiry timer, beyond the shared contract:
 * the queue stays FIFO through its compaction, and the expiry timer (kept
 * when a later lease comes, re-armed when an earlier one does) still wakes
 * the head waiter when the lease it waits behind runs out.
 */
describe('InMemoryLockProvider queue and expiry timer', () => {
  test('the waiter queue hands out in arrival order across compactions, with leavers taken out anywhere', () => {
    const q = new WaiterQueue<number>();
    const model: number[] = [];
    const out: number[] = [];
    const expected: number[] = [];
    let next = 0;
    const remove = (n: number): void => {
      expect(q.remove(n)).toBe(true);
      expect(q.remove(n)).toBe(false);
      model.splice(model.indexOf(n), 1);
    };
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3_000; i++) {
        q.push(next);
        model.push(next++);
      }
      remove(next - 2); // near the tail
      for (let i = 0; i < 2_500; i++) {
        out.push(q.shift()!);
        expected.push(model.shift()!);
      }
      remove(q.first()!); // the head
      expect(q.length).toBe(model.length);
    }
    out.push(...q.drain());
    expected.push(...model);
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
    expect(out.length).toBe(expected.length);
    expect(out.every((n, i) => n === expected[i])).toBe(true);
  });

  test("a waiter behind a holder granted from the queue is woken when that holder's lease runs out", async () => {
    const memory = new InMemoryLockProvider();
    try {
      // The timer is armed for the first holder's lease; the second holder's ends later.
      expect(memory.acquire({ key: 'k', owner: 'first', ttl: 200, wait: false })).not.toBeNull();
      const second = memory.acquire({ key: 'k', owner: 'second', ttl: 600, wait: true });
      const third = memory.acquire({ key: 'k', owner: 'third', ttl: 30_000, wait: true, waitTimeout: 10_000 });
      expect(await memory.release('k', 'first')).toBe(true);
      expect(await second).not.toBeNull();
      // "second" vanishes without releasing: "third" gets the key once its lease ended.
      const grant = await third;
      expect(grant).not.toBeNull();
      expect(await memory.release('k', 'second')).toBe(false);
      expect(await memory.release('k', 'third')).toBe(true);
    } finally {
      await memory.close();
    }
  });

  test('a lease shortened by extend wakes the waiter at its new end', async () => {
    const memory = new InMemoryLockProvider();
    try {
      expect(memory.acquire({ key: 'k', owner: 'holder', ttl: 60_000, wait: false })).not.toBeNull();
      const waiter = memory.acquire({ key: 'k', owner: 'waiter', ttl: 30_000, wait: true, waitTimeout: 20_000 });
      expect(await memory.extend('k', 'holder', 100)).toBe(true);
      expect(await waiter).not.toBeNull();
      expect(await memory.release('k', 'holder')).toBe(false);
    } finally {
      await memory.close();
    }
  });
});
