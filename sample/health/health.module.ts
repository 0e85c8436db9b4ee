import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { LockHealthIndicator } from 'nest-lock/health';

/** GET /health: the lock store answers (its kind and round-trip time), through @nestjs/terminus. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly locks: LockHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.locks.isHealthy('locks')]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController], providers: [LockHealthIndicator] })
export class HealthModule {}
