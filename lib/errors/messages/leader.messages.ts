/** Leader election: the campaign's log lines, why a term ended, and wrong uses of `@Leader` and `LeaderService`, each with the fix. @internal */

export const campaignCrashedLog = (name: string, cause: string): string =>
  `Leader campaign for "${name}" stopped on an unexpected error: ${cause}`;

export const campaignEndedLog = (name: string, cause: string): string =>
  `Leader campaign for "${name}" ended: ${cause}`;

export const campaignStoreFailedLog = (name: string, cause: string, retryDelay: number): string =>
  `Campaign for leader "${name}": ${cause} Trying again every ${retryDelay} ms.`;

export const campaignStoreBackLog = (name: string): string => `Campaign for leader "${name}": the store answers again.`;

export const electedLog = (instanceId: string, name: string, fencingToken: number): string =>
  `This instance (${instanceId}) leads "${name}" (fencing token ${fencingToken}).`;

export const leaderIgnoredShutdownLog = (name: string, ttl: number): string =>
  `Leader method of "${name}" was still running ${ttl} ms after its signal aborted (shutdown); released the name anyway. ` +
  'Make it return when leadership.signal aborts.';

export const leaderOverranLog = (name: string, ttl: number): string =>
  `Leader method of "${name}" is still running ${ttl} ms after its leadership ended; ` +
  'the name stays taken until it returns. Make it return when leadership.signal aborts.';

export const leaderThrewLog = (name: string, retryDelay: number, cause: string): string =>
  `Leader method of "${name}" threw; gave up leadership, campaigning again in ${retryDelay} ms: ${cause}`;

export const leadershipLostLog = (name: string, fencingToken: number, detail: string): string =>
  `Leadership of "${name}" (fencing token ${fencingToken}) was lost: ${detail}.`;

export const leadershipEndedLog = (name: string, fencingToken: number, detail: string): string =>
  `Leadership of "${name}" (fencing token ${fencingToken}) ended: ${detail}.`;

/** Why a term ended: the detail of the log line above and of the `LockLostError` its `signal` aborts with. */
export const leadershipEndDetails = {
  stopped: 'the campaign was stopped (application shutdown)',
  returned: 'the leader method returned',
  threw: 'the leader method threw',
  resigned: 'it resigned',
  leaseLost: 'its lease on the store was lost (it expired, or the store no longer has it under this owner)',
  connectionDropped: 'the connection to the store dropped (a store that restarts may come back without this lease)',
  notRenewed: (unrenewedMs: number, marginMs: number): string =>
    `its lease was not renewed for ${unrenewedMs} ms; it stepped down ${marginMs} ms before the lease could end on the store`,
  /** The detail of the `LockLostError` a leader's `signal` aborts with. */
  lost: (detail: string): string => `leadership ended: ${detail}`,
};

export const campaignAfterStopMessage = (where: string): string =>
  `${where}: the leader election is stopped (application shutdown); start no campaigns after the app closes.`;

export const secondCampaignMessage = (where: string, name: string): string =>
  `${where}: this instance already campaigns for "${name}"; use one campaign, or one @Leader method, per name.`;

export const noHolderMessage = (name: string, kind: string): string =>
  `leader("${name}"): the "${kind}" store cannot tell who holds a lock (its provider has no holder() method); ` +
  'use a built-in store, or implement holder() in yours.';

export const leaderRunOptionMessage = (where: string): string =>
  `${where}: run is not an option of @Leader (the decorated method is what runs); leave it out.`;

export const leaderNotAMethodMessage = (where: string, property: string): string =>
  `${where}: @Leader() decorates methods only; ${property} is not a method; move it to a method.`;

export const leaderStaticMessage = (where: string): string =>
  `${where}: static methods cannot lead; put @Leader on a method of a provider Nest creates.`;

export const scopedLeaderMessage = (name: string, className: string, method: string): string =>
  `@Leader("${name}") on ${className}.${method}: the provider is request- or transient-scoped; ` +
  'a leader method needs one instance per app (a default, singleton-scoped provider).';
