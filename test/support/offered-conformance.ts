/**
 * This repository's own way to run the conformance kit under Jest: the cases a
 * store does not offer (turned off by an option, e.g. PostgreSQL's
 * `acquireMany: false`) are left out rather than registered as skipped cases,
 * because CI runs no skipped test. Each option turned off still runs the kit's
 * absence case ("does not offer X: the store declares no X"), which fails if
 * the store declares it anyway. Store authors use `describeLockProviderConformance`,
 * which lists such cases as skipped, by name, in their runner's output.
 */
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { lockProviderConformance, type ConformanceOptions, type ConformanceTarget } from 'nest-lock/testing';

/** What a set-up or tear-down may take (the factory, closing the store), in ms. */
const HOOK_TIMEOUT_MS = 60_000;
/** What Jest's timeout adds to a case's own (the kit fails a late case itself, with a message). */
const RUNNER_MARGIN_MS = 10_000;

/** Registers the kit's cases for the store `create` makes, without the ones `options` turns off. */
export function describeOfferedConformance(
  label: string,
  create: () => Promise<ConformanceTarget> | ConformanceTarget,
  options: ConformanceOptions,
): void {
  const suite = lockProviderConformance(label, create, options);
  describe(`LockProvider conformance: ${label}`, () => {
    beforeAll(() => suite.setUp(), HOOK_TIMEOUT_MS);
    afterAll(() => suite.tearDown(), HOOK_TIMEOUT_MS);
    for (const c of suite.cases) if (c.skipped === undefined) it(c.name, () => c.run(), c.timeout + RUNNER_MARGIN_MS);
  });
}
