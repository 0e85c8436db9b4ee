import { LockProvider } from '../../lib/index.js';

/**
 * A custom store with only the required methods (no `holder`, `inspect`,
 * `coalesce`, `watchConnection`), to test what the library says about a store
 * that lacks an optional method. It never grants a lock.
 */
export class MinimalLockProvider extends LockProvider {
  constructor(readonly kind = 'minimal') {
    super();
  }
  acquire(): null {
    return null;
  }
  extend(): boolean {
    return false;
  }
  release(): boolean {
    return false;
  }
  async ping(): Promise<number> {
    return 0;
  }
  async close(): Promise<void> {}
}
