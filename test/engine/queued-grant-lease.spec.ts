import { LockManager, InMemoryLockProvider } from '../../lib/index.js';
import { sleep } from '../support/sleep.js';

// A grant after a wait starts its lease at the hand-off: a waiter that waited longer than its ttl keeps the lock.
test('a waiter that waited longer than its ttl is not declared lost on grant', async () => {
  const m = new LockManager({ provider: new InMemoryLockProvider() });
  const holder = await m.acquire('x', { ttl: 300 });
  const release = sleep(450).then(() => holder.release());
  const waiter = await m.acquire('x', { ttl: 300 });
  await release;
  await sleep(50);
  expect(waiter.signal.aborted).toBe(false);
  expect(await waiter.release()).toBe(true);
});
