import type { LockManager } from '../../lib/index.js';

/** Takes `name` without waiting, releases it, and answers its fencing token; throws when it was held. */
export async function tokenOf(locks: LockManager, name: string): Promise<number> {
  const handle = await locks.tryAcquire(name);
  if (!handle) throw new Error(`"${name}" was held`);
  await handle.release();
  return handle.fencingToken;
}
