import { Get, Header, Inject, Injectable } from '@nestjs/common';
import { LockService } from '../nest/lock.service.js';
import { LockEventLog, redact } from './lock-event-log.js';
import { LOCK_DASHBOARD_OPTIONS, type ResolvedDashboardOptions } from './lock-dashboard-options.interface.js';
import type { DashboardLock, LockDashboardData } from './lock-dashboard-data.interface.js';
import { DASHBOARD_CSP, DASHBOARD_HTML } from './lock-dashboard.page.js';

/**
 * The lock page and its JSON. `LockDashboardModule.register()` mounts a
 * subclass at the configured path, with the app's guards. Read-only: no
 * route changes a lock. @internal
 */
@Injectable()
export class LockDashboardController {
  constructor(
    private readonly locks: LockService,
    private readonly log: LockEventLog,
    @Inject(LOCK_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  /** The HTML page. */
  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Content-Security-Policy', DASHBOARD_CSP)
  page(): string {
    return DASHBOARD_HTML;
  }

  /** What the page shows, as JSON. */
  @Get('data')
  @Header('Cache-Control', 'no-store')
  async data(): Promise<LockDashboardData> {
    let locks: DashboardLock[] = [];
    let more = false;
    let storeError: string | null = null;
    try {
      const page = await this.locks.inspect({ limit: this.options.maxLocks });
      more = page.cursor !== undefined;
      locks = page.locks.map((l) => ({
        name: l.name,
        mode: l.mode,
        permits: l.permits,
        instanceId: l.instanceId ?? null,
        mine: l.mine,
        label: l.label ?? null,
        fencingToken: l.fencingToken,
        leaseRemainingMs: l.leaseRemainingMs,
        heldSince: l.heldSince?.toISOString() ?? null,
        waiters: l.waiters,
      }));
    } catch (err) {
      storeError = redact(err instanceof Error ? err.message : String(err));
    }
    return {
      store: this.locks.provider.kind,
      generatedAt: new Date().toISOString(),
      refreshMs: this.options.refreshMs,
      locks,
      more,
      storeError,
      counts: this.log.countsByName(),
      recent: this.log.recent(),
    };
  }
}
