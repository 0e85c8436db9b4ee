import { Mutex } from 'async-mutex';
import type { Contender, LockClient } from './contender.js';

/** `async-mutex`: one `Mutex` per name, `runExclusive`. */
export const asyncMutex: Contender = {
  id: 'async-mutex',
  label: 'async-mutex',
  store: 'memory',
  kind: 'peer',
  retry: '-',
  waits: 'FIFO queue in memory',
  async create() {
    const mutexes = new Map<string, Mutex>();
    const client: LockClient = {
      withLock(name, fn) {
        let mutex = mutexes.get(name);
        if (!mutex) mutexes.set(name, (mutex = new Mutex()));
        return mutex.runExclusive(fn);
      },
      async close() {},
    };
    return client;
  },
};
