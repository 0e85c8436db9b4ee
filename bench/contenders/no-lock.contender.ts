import type { Contender, LockClient } from './contender.js';

/**
 * Not a lock: the section run by one caller in one process, back to back
 * (scenario 3 runs it with a single caller, so the counter still comes out
 * exact). Its sections/s is the ceiling of any mutual exclusion of this
 * section on this machine: sections cannot overlap, and each is two round
 * trips (GET, then SET) that no lock can make shorter.
 */
export const noLockCeiling: Contender = {
  id: 'no-lock-ceiling',
  label: 'no lock, 1 caller (ceiling)',
  store: 'redis',
  kind: 'reference',
  retry: '-',
  waits: 'no lock: one caller runs the section back to back; no lock can go faster',
  async create() {
    const client: LockClient = {
      withLock(_name, fn) {
        return fn();
      },
      async close() {},
    };
    return client;
  },
};
