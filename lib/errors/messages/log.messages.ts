/** Log lines of the engine and the module: held locks, store failures, scheduled ticks, the boot check. @internal */

export const heldSkippedLog = (name: string): string =>
  `Lock "${name}" is held elsewhere; skipped the call (onHeld: 'skip'). Further ones are counted and reported once a minute.`;

export const heldThrownLog = (name: string): string =>
  `Lock "${name}" is held elsewhere; the call failed with LockAcquireError (onHeld: 'throw'). Further ones are counted and reported once a minute.`;

export const heldSummaryLog = (name: string, outcome: 'skipped' | 'refused', count: number, seconds: number): string =>
  `${outcome} ${count} more call${count === 1 ? '' : 's'} of lock "${name}" in the last ${seconds} s: it was held elsewhere.`;

export const storeFailuresSummaryLog = (cause: string, count: number, seconds: number): string =>
  `The lock store failed ${count} more time${count === 1 ? '' : 's'} in the last ${seconds} s with the same cause (logged once per interval): ${cause}`;

export const storeFailureAnsweredLog = (status: number, cause: string): string =>
  `Answered ${status}: ${cause} Further failures of this cause are counted and reported once a minute.`;

export const releaseFailedLog = (name: string, cause: string): string =>
  `Releasing lock "${name}" failed; its lease will expire on its own: ${cause}`;

export const renewFailedLog = (name: string, cause: string): string =>
  `Renewing lock "${name}" failed (${cause}); retrying until its lease ends.`;

export const onEventThrewLog = (type: string, name: string, cause: string): string =>
  `onEvent threw for a "${type}" event of lock "${name}" (ignored; onEvent must not throw): ${cause}`;

/** What a method no caller waits on is called in its log lines: a `@Cron`/`@Interval`/`@Timeout` task, or an `@OnEvent`/`@EventPattern` handler. */
export const callerlessKinds = { task: 'scheduled task', event: 'event handler' } as const;

/** `kind`: one of {@link callerlessKinds} (a handler with no caller to answer). */
export const scheduledFailOpenLog = (kind: string, name: string, cause: string): string =>
  `Lock store failed for ${kind} "${name}"; running ${kind === 'scheduled task' ? 'the tick' : 'it'} without the lock (failOpen): ${cause}`;

export const scheduledSkippedLog = (kind: string, name: string, cause: string): string =>
  `Lock store failed for ${kind} "${name}"; skipped this ${kind === 'scheduled task' ? 'tick' : 'event'}: ${cause}`;

export const scheduledShutdownLog = (kind: string, name: string): string =>
  `${kind === 'scheduled task' ? 'Scheduled task' : 'Event handler'} "${name}" skipped: the application is shutting down.`;

export const inMemoryInProductionLog = (): string =>
  'LockModule uses the in-memory provider with NODE_ENV=production: locks exclude callers of this process only, ' +
  'not other instances. Configure LockModule.forRoot({ redis }) or ({ postgres }) for several instances.';

export const bootCheckFailedLog = (cause: string): string =>
  `The lock store does not work: ${cause}. Locks will fail with LockStoreError until it does ` +
  "(verifyOnBoot: 'fail' stops the boot instead; false skips this check).";

export const bootCheckFailedDetail = (cause: string): string =>
  `${cause} (the boot stops because LockModule has verifyOnBoot: 'fail'; 'warn' boots anyway and logs this)`;

export const prunedLog = (table: string, rows: number, olderThanMs: number): string =>
  `Pruned ${rows} row${rows === 1 ? '' : 's'} of lock table "${table}": locks unused for more than ${Math.round(olderThanMs / 1000)} s.`;

export const pruneFailedLog = (table: string, cause: string, everyMs: number, failedSince: number): string =>
  `Background pruning of lock table "${table}" failed (locks are not affected; it tries again in about ${Math.round(everyMs / 1000)} s, ` +
  `and this warning repeats at most once an hour${failedSince > 0 ? `; ${failedSince} more failed run${failedSince === 1 ? '' : 's'} since the last one` : ''}). ` +
  `Set the provider's prune option to false to turn it off: ${cause}`;
