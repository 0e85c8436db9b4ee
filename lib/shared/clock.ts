/** Milliseconds on the process's monotonic clock: for leases, deadlines and durations, never for wall time. */
export const now = (): number => performance.now();
