export { LockHealthIndicator } from './lock.health.js';
