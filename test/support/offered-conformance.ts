/**
 * This repository's conformance runs under Jest: the kit's own
 * `describeLockProviderConformance` with Jest's functions. The cases a store
 * does not offer (turned off by an option, e.g. PostgreSQL's
 * `acquireMany: false`) are not registered, and the kit's warning names
 * them; each option turned off still runs the kit's absence case ("does not
 * offer X: the store declares no X"), which fails if the store declares it
 * anyway.
 */
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { describeLockProviderConformance, type ConformanceOptions, type ConformanceTarget } from 'nest-lock/testing';

/** Registers the kit's cases for the store `create` makes, without the ones `options` turns off. */
export function describeOfferedConformance(
  label: string,
  create: () => Promise<ConformanceTarget> | ConformanceTarget,
  options: ConformanceOptions,
): void {
  describeLockProviderConformance(label, create, { describe, it, beforeAll, afterAll }, options);
}
