import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';

/** Options of `LockDashboardModule.register()`. */
export interface LockDashboardOptions {
  /** Route of the page; its JSON is at `<path>/data`. Default `'locks'` (after any global prefix). */
  path?: string;
  /**
   * Guards that protect the page and its JSON (for example the app's admin
   * guard). A guard class is created in this module: give the modules its
   * dependencies come from in `imports`.
   */
  guard?: Type<CanActivate> | CanActivate | Array<Type<CanActivate> | CanActivate>;
  /** Modules the guard needs. */
  imports?: ModuleMetadata['imports'];
  /** How often the page refreshes, in ms. Default 2000. */
  refreshMs?: number;
  /** How many recent events the page shows. Default 100. */
  recentEvents?: number;
  /** Most held locks read per refresh. Default 200. */
  maxLocks?: number;
}

/** The options, with defaults. @internal */
export interface ResolvedDashboardOptions {
  readonly path: string;
  readonly refreshMs: number;
  readonly recentEvents: number;
  readonly maxLocks: number;
}

/** DI token of the resolved options. @internal */
export const LOCK_DASHBOARD_OPTIONS = Symbol('LOCK_DASHBOARD_OPTIONS');
