import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { LockProvider } from '../contract/lock-provider.js';

/**
 * A `@nestjs/terminus` health indicator for the lock store: `up` with the
 * store's kind and round-trip time when it answers a ping (and `warnings`
 * about its server's setup, such as a Redis eviction policy that may drop
 * lock keys), `down` with the reason when it does not (Redis unreachable,
 * database down). It never reports a connection string.
 *
 * Import it from `nest-lock/health` (so apps without terminus never load it),
 * add it to the providers of a module that imports `TerminusModule`:
 *
 * @example
 * ```ts
 * import { LockHealthIndicator } from 'nest-lock/health';
 *
 * @Controller('health')
 * class HealthController {
 *   constructor(private readonly health: HealthCheckService, private readonly locks: LockHealthIndicator) {}
 *
 *   @Get() @HealthCheck()
 *   check() {
 *     return this.health.check([() => this.locks.isHealthy('locks')]);
 *   }
 * }
 *
 * @Module({ imports: [TerminusModule], controllers: [HealthController], providers: [LockHealthIndicator] })
 * class HealthModule {}
 * ```
 */
@Injectable()
export class LockHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly provider: LockProvider,
  ) {}

  /**
   * Pings the store. Resolves `{ [key]: { status: 'up', store, roundTripMs } }`
   * (with `warnings` when the store found something wrong in how its server
   * is set up, e.g. a Redis that may evict lock keys) or
   * `{ [key]: { status: 'down', store, message } }` (also when the store
   * refuses that setup: `evictionCheck: 'fail'`).
   */
  async isHealthy<const Key extends string = 'lock'>(key: Key = 'lock' as Key): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    try {
      const roundTripMs = await this.provider.ping();
      const problems = this.provider.setupCheck?.().problems ?? [];
      const up: { store: string; roundTripMs: number; warnings?: string[] } = {
        store: this.provider.kind,
        roundTripMs: Math.round(roundTripMs * 100) / 100,
      };
      if (problems.length > 0) up.warnings = [...problems];
      return indicator.up(up);
    } catch (err) {
      return indicator.down({ store: this.provider.kind, message: err instanceof Error ? err.message : String(err) });
    }
  }
}
