/** What the conformance kit (`nest-lock/testing`) says about the store and its options, beside the cases' own failures. @internal */

/** Why a case does not run: the option that turned it off, or the target field that is missing. */
export const conformanceSkipReason = (capability: string): string =>
  capability === 'pausedHolder'
    ? 'the target has no pausedHolder (a child process on the same store); give one to run it'
    : `the store does not offer ${capability} ({ ${capability}: false })`;

/** A capability left on whose method the store lacks. */
export const conformanceMissingMethod = (label: string, method: string, option: string): string =>
  `${label} has no ${method}; implement it, or pass { ${option}: false } to the conformance kit if the store does not offer it`;

/** A capability turned off that the store declares all the same: the engine would use it unchecked. */
export const conformanceDeclaredAnyway = (label: string, what: string, option: string): string =>
  `${label} declares ${what}, but { ${option}: false } skips its cases: the engine would use it unchecked. Remove the option, or remove ${what} from the store`;

/** A case that did not finish in time. */
export const conformanceCaseTimeout = (title: string, ms: number): string =>
  `"${title}" did not finish within ${ms} ms: a store call never answered (a waiter never woken, a call without a bound?). ` +
  'Make every call end: a wait ends at its waitTimeout or signal, others at the store timeout';

/** A runner object without describe/it. */
export const conformanceRunnerMessage = (got: string): string =>
  `describeLockProviderConformance(): pass the runner's functions, e.g. { describe, it, beforeAll, afterAll } (Jest, Vitest) or { describe, it, before, after } (node:test); got ${got}`;

/** The cases a store's options or target leave out, each by name with the reason, said once per suite. */
export const conformanceLeftOutMessage = (label: string, cases: readonly { name: string; reason: string }[]): string =>
  `LockProvider conformance: ${label}: ${cases.length} case(s) not run, as its options and target ask:\n` +
  cases.map((c) => `  - ${c.name} [not run: ${c.reason}]`).join('\n');

/** A case run before the suite's setUp (an author registering the cases by hand). */
export const conformanceNotSetUpMessage = (title: string): string =>
  `"${title}" ran before the conformance suite was set up: call suite.setUp() in a before-all hook, and suite.tearDown() after`;
