/** What callers of a lock are told: held, timed out, store failed, lost, nested, closed. @internal */

export const heldMessage = (name: string): string =>
  `Lock "${name}" is held by another caller. Retry later, or use onHeld: 'wait' to queue for it.`;

export const waitTimeoutMessage = (name: string, waitedMs: number): string =>
  `Timed out after ${waitedMs} ms waiting for lock "${name}", which is still held by another caller. Raise waitTimeout or retry later.`;

export const storeFailedMessage = (operation: string, lockName: string | undefined, detail: string): string =>
  `Lock store failed during ${operation}${lockName === undefined ? '' : ` of lock "${lockName}"`}: ${detail}. ` +
  'The lock state is unknown; check that the store is reachable and its connection options are right.';

/** What a client is told of a failed store: no address, no key, no cause (those are logged on the server). */
export const storeUnavailableMessage = (lockName: string | undefined): string =>
  `The lock store is unavailable${lockName === undefined ? '' : `, so lock "${lockName}" could not be taken`}. Retry later.`;

export const jobDelayedMessage = (name: string, delayMs: number): string =>
  `Lock "${name}" is held by another caller; the job was moved back to delayed for ${delayMs} ms (jobDelay) and will run again then.`;

export const lostMessage = (name: string, detail: string): string =>
  `Lock "${name}" was lost: ${detail}. Work protected by it is no longer exclusive; stop it, and check fencing tokens on writes.`;

export const reentryMessage = (name: string): string =>
  `Lock "${name}" is already held by this call chain; taking it again would wait on itself. ` +
  'Pass reentrant: true to run the inner call under the outer lock, or use a different name.';

export const closedWhileWaitingMessage = (name: string): string =>
  `Lock "${name}": the lock manager closed (application shutdown) while this call waited for it. Nothing ran; no action needed during shutdown.`;

export const requestedAfterCloseMessage = (name: string): string =>
  `Lock "${name}" was requested after the lock manager closed (application shutdown). Stop scheduling work before the app closes.`;

export const grantedAfterCloseMessage = (name: string): string =>
  `Lock "${name}" was granted after the lock manager closed (application shutdown); it was released again and nothing ran.`;

export const holdConflictMessage = (name: string, key: string): string =>
  `InMemoryLockProvider.hold("${name}"): the lock (key "${key}") is already held, by the app or by an earlier hold() not released yet; ` +
  'release it first, or call reset() between tests.';

/** The detail of a {@link LockLostError}: why the lease was lost. */
export const lostDetails = {
  alreadyReleased: 'it was already released',
  releasedMeanwhile: 'it was released meanwhile',
  takenOver: 'the store no longer has it under this owner (it expired or was taken over)',
  maxHold: (ms: number | undefined): string => `maxHold of ${ms} ms reached`,
  renewalUnreachable: (ttl: number): string => `its ${ttl} ms lease ended while renewal could not reach the store`,
  notRenewedInTime: (ttl: number): string => `its ${ttl} ms lease ended before it could be renewed`,
  renewOff: (ttl: number): string => `its ${ttl} ms lease ended (renew is off)`,
  /** `detail` (why the lease ended), when this process saw the end only `lateMs` after the lease's end itself (not its drift margin): it was not running meanwhile. */
  notRunning: (detail: string, lateMs: number): string =>
    `${detail}; the lease ran out while this process was not running (a blocked event loop, a long GC pause, or a stopped process): ` +
    `it ran again ${lateMs} ms after the end of the lease`,
};

const REASON_PHRASES: Readonly<Record<number, string>> = {
  409: 'Conflict',
  423: 'Locked',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** The reason phrase of an HTTP status the exception filter answers with (`Conflict`, `Service Unavailable`), for callers outside HTTP. */
export const reasonPhrase = (status: number): string => REASON_PHRASES[status] ?? 'Error';
