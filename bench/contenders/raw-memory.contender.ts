import type { Contender, LockClient } from './contender.js';

/**
 * The raw in-memory baseline: a promise chain per name (the least an
 * in-process FIFO mutex can do), no leases, no tokens.
 */
export const rawMemory: Contender = {
  id: 'raw-memory',
  label: 'raw promise chain',
  store: 'memory',
  kind: 'raw',
  retry: '-',
  waits: 'promise chain per name',
  async create() {
    const tails = new Map<string, Promise<unknown>>();
    const client: LockClient = {
      withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
        const previous = tails.get(name) ?? Promise.resolve();
        const run = previous.then(fn);
        const tail = run.then(
          () => undefined,
          () => undefined,
        );
        tails.set(name, tail);
        void tail.then(() => {
          if (tails.get(name) === tail) tails.delete(name);
        });
        return run;
      },
      async close() {},
    };
    return client;
  },
};
