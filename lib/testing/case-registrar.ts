import type { ConformanceContext } from './conformance-case.interface.js';
import type { ConformanceCapability } from './conformance-target.interface.js';

/** The body of a case. */
export type CaseBody = (c: ConformanceContext) => Promise<void>;

/** A case as its file declares it, before the suite knows the store. @internal */
export interface DeclaredCase {
  readonly group: string | undefined;
  readonly title: string;
  readonly needs: readonly ConformanceCapability[];
  readonly timeout: number;
  readonly body: CaseBody;
}

/** Longest run of a case, in ms, unless it says otherwise. */
export const CASE_TIMEOUT_MS = 30_000;

/**
 * How the case files declare their cases: `test(title, body, options)` as a
 * runner's, `describe(group, needs, ...)` for a group whose cases all need
 * the same capabilities. @internal
 */
export class CaseRegistrar {
  readonly cases: DeclaredCase[] = [];
  private group: { name: string; needs: readonly ConformanceCapability[] } | undefined;

  readonly test = (
    title: string,
    body: CaseBody,
    options: { needs?: ConformanceCapability[]; timeout?: number } = {},
  ): void => {
    const needs = [...(this.group?.needs ?? []), ...(options.needs ?? [])];
    this.cases.push({ group: this.group?.name, title, needs, timeout: options.timeout ?? CASE_TIMEOUT_MS, body });
  };

  readonly describe = (name: string, needs: ConformanceCapability[], define: () => void): void => {
    const outer = this.group;
    this.group = { name, needs: [...(outer?.needs ?? []), ...needs] };
    try {
      define();
    } finally {
      this.group = outer;
    }
  };
}
