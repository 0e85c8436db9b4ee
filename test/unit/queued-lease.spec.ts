import 'reflect-metadata';
import { InMemoryLockProvider, LockManager } from '../../lib/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a lock granted after waiting longer than its ttl is held and renewed, not lost at once', async () => {
  const m = new LockManager({ provider: new InMemoryLockProvider() });
  const holder = await m.acquire('x', { ttl: 5_000 });
  setTimeout(() => void holder.release(), 700);
  const lock = await m.acquire('x', { ttl: 400 });
  await sleep(900); // past the 400 ms ttl: renewal kept it
  expect(lock.held).toBe(true);
  expect(lock.signal.aborted).toBe(false);
  expect(await lock.release()).toBe(true);
});
