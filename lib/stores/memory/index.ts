export { InMemoryLockProvider, type InMemoryHoldOptions } from './in-memory-lock.provider.js';
