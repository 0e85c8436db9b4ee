import { performance } from 'node:perf_hooks';

/**
 * Milliseconds on the process's monotonic clock: for leases, deadlines and durations, never for wall time.
 * (The imported `performance`: the global one is a lazy getter, read on every call.)
 */
export const now = (): number => performance.now();
