/**
 * What a store found wrong in how its server is set up (a Redis that may evict lock keys): log lines, health output, errors;
 * and a statement file of a SQL store that does not read (the library's own files). @internal
 */

/** What the eviction check does about it, by its mode: the end of its message. */
const evictionCheckSuffix = (mode: 'warn' | 'fail'): string =>
  mode === 'fail'
    ? " Until then every lock call fails with LockStoreError (evictionCheck: 'fail'; 'warn' only logs this)."
    : " (evictionCheck: 'fail' refuses such a Redis instead; false turns this check off.)";

/** A Redis whose eviction policy is not `noeviction`. */
export const evictionPolicyMessage = (at: string, policy: string, mode: 'warn' | 'fail'): string =>
  `Redis at ${at} has maxmemory-policy ${policy}: once it reaches maxmemory it may evict lock keys (they carry expiries, so volatile-* policies evict them too), ` +
  'and a lock still held is then granted to another caller, with no error anywhere. ' +
  'Set maxmemory-policy noeviction on it (CONFIG SET maxmemory-policy noeviction, or the parameter of your managed Redis), or keep locks in a Redis of their own that has it.' +
  evictionCheckSuffix(mode);

/** A Redis that did not tell its eviction policy (`INFO memory` refused, or answered without it). */
export const evictionPolicyUnknownMessage = (at: string, cause: string, mode: 'warn' | 'fail'): string =>
  `Redis at ${at} did not tell its maxmemory-policy (INFO memory: ${cause}), so whether it may evict lock keys is unknown: ` +
  'allow the INFO command for this user, or set evictionCheck: false if you know it runs with maxmemory-policy noeviction.' +
  evictionCheckSuffix(mode);

/** The detail of the boot error when the store refuses its server's setup. */
export const setupRefusedBootDetail = (problems: readonly string[]): string =>
  `the store refuses how its server is set up: ${problems.join(' ')}`;

/** INFO memory answered without the field of the eviction policy: the cause of {@link evictionPolicyUnknownMessage}. */
export const policyFieldMissingCause = 'no maxmemory_policy field';

/** A SQL store's statement file without its header comment. */
export const statementHeaderMessage = (file: string): string =>
  `${file}.sql must open with a /* ... */ header that has Input: and Output: sections`;

/** A statement file whose header does not name every `$n` parameter its text uses. */
export const statementParametersMessage = (file: string, parameters: readonly string[]): string =>
  `${file}.sql uses ${parameters.join(', ')}, which its Input: section does not name`;

/** A statement that uses a placeholder the store does not define. */
export const statementPlaceholderMessage = (name: string, placeholder: string): string =>
  `${name}.sql uses {{${placeholder}}}, which the store does not define`;
