/**
 * The drift margin of a lease of `ms`: how long before the lease's end, on
 * this process's monotonic clock, a held lock stops counting as held. 1 % of
 * the lease plus 2 ms, as Redlock: it covers a clock of this process that
 * runs slower than the store's over the lease, and the store's own rounding
 * and expiry granularity (see docs/guarantees.md, "Clocks"). @internal
 */
export const leaseDrift = (ms: number): number => ms * 0.01 + 2;
