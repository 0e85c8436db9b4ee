/**
 * `nest-lock/testing`: the conformance suite every store of this package
 * passes, for a store of your own, under Jest, Vitest or node:test. See
 * docs/custom-store.md.
 */
export { describeLockProviderConformance, type ConformanceRunner } from './describe-conformance.js';
export { lockProviderConformance, type ConformanceSuite } from './conformance-suite.js';
export type { ConformanceCase, ConformanceContext } from './conformance-case.interface.js';
export type {
  ConformanceOptions,
  ConformanceTarget,
  PausedHolderProcess,
  ConformanceCapability,
} from './conformance-target.interface.js';
export { runPausedHolder } from './paused-holder.js';
