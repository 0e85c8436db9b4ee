import 'reflect-metadata';
import { LockManager, InMemoryLockProvider } from '../../lib/index.js';

test('smoke', async () => {
  const m = new LockManager({ provider: new InMemoryLockProvider() });
  expect(await m.withLock('a', () => 42)).toBe(42);
});
