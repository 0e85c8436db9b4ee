import { Controller, Module, UseGuards, type CanActivate, type DynamicModule, type Type } from '@nestjs/common';
import { LockOptionsError } from '../errors/lock.errors.js';
import { optionMessage, expected } from '../errors/lock.messages.js';
import { LockDashboardController } from './lock-dashboard.controller.js';
import {
  LOCK_DASHBOARD_OPTIONS,
  type LockDashboardOptions,
  type ResolvedDashboardOptions,
} from './lock-dashboard-options.interface.js';
import { LockEventLog } from './lock-event-log.js';

function positiveInt(value: unknown, option: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new LockOptionsError(
      optionMessage('LockDashboardModule.register()', option, expected.integerFrom1To(max), value),
    );
  }
  return value;
}

function resolve(options: LockDashboardOptions): ResolvedDashboardOptions {
  const path = options.path ?? 'locks';
  if (typeof path !== 'string' || path.replace(/^\/+|\/+$/g, '') === '') {
    throw new LockOptionsError(optionMessage('LockDashboardModule.register()', 'path', expected.dashboardPath, path));
  }
  return {
    path: path.replace(/^\/+|\/+$/g, ''),
    refreshMs: positiveInt(options.refreshMs, 'refreshMs', 2_000, 3_600_000),
    recentEvents: positiveInt(options.recentEvents, 'recentEvents', 100, 10_000),
    maxLocks: positiveInt(options.maxLocks, 'maxLocks', 200, 1_000),
  };
}

/**
 * A read-only page of the locks: what is held now in every instance (with
 * lease bars and waiters), counts of events per name and the recent events,
 * refreshing on its own; and its JSON at `<path>/data`. Off unless imported;
 * needs `LockModule` in the app. Shows no connection string and no owner
 * token, but it does show lock names: protect it with the app's own guard.
 *
 * @example
 * ```ts
 * import { LockDashboardModule } from 'nest-lock/dashboard';
 *
 * @Module({
 *   imports: [LockModule.forRoot({ redis: process.env.REDIS_URL }), LockDashboardModule.register({ path: '/admin/locks', guard: AdminGuard })],
 * })
 * export class AppModule {}
 * ```
 */
@Module({})
export class LockDashboardModule {
  /** Mounts the page at `options.path` (default `/locks`), behind `options.guard`. */
  static register(options: LockDashboardOptions = {}): DynamicModule {
    const resolved = resolve(options);
    // One controller class per registration: the route and guards are its metadata.
    class MountedLockDashboardController extends LockDashboardController {}
    Controller(resolved.path)(MountedLockDashboardController);
    const guards = options.guard === undefined ? [] : Array.isArray(options.guard) ? options.guard : [options.guard];
    if (guards.length > 0)
      UseGuards(...(guards as Array<Type<CanActivate> | CanActivate>))(MountedLockDashboardController);
    return {
      module: LockDashboardModule,
      imports: options.imports ?? [],
      controllers: [MountedLockDashboardController],
      providers: [{ provide: LOCK_DASHBOARD_OPTIONS, useValue: resolved }, LockEventLog],
    };
  }
}
