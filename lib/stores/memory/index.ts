export { InMemoryLockProvider } from './in-memory-lock.provider.js';
