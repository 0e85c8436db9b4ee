import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { LockExceptionFilter, LockModule } from 'nest-lock';
import { LockDashboardModule } from 'nest-lock/dashboard';
import { AccountsController } from './accounts/accounts.controller.js';
import { LocalhostGuard } from './admin/localhost.guard.js';
import { DigestTask } from './digest/digest.task.js';
import { HealthModule } from './health/health.module.js';
import { lockStoreOptions } from './lock-store.js';
import { OutboxController } from './outbox/outbox.controller.js';
import { OutboxRelay } from './outbox/outbox.relay.js';
import { PayoutsController } from './payouts/payouts.controller.js';
import { PayoutsService } from './payouts/payouts.service.js';

/**
 * The sample app: the README's set-up (LockModule, the filter app-wide), the
 * store chosen by the environment, a scheduled task, a leader loop, the health
 * check and the lock page.
 */
@Module({
  imports: [
    LockModule.forRoot({ ...lockStoreOptions(), ttl: 30_000 }),
    ScheduleModule.forRoot(),
    HealthModule,
    // The lock page, read-only, behind a guard: here, requests from this machine only.
    LockDashboardModule.register({ path: '/admin/locks', guard: LocalhostGuard }),
  ],
  controllers: [PayoutsController, AccountsController, OutboxController],
  providers: [
    PayoutsService,
    DigestTask,
    OutboxRelay,
    // Every route answers 409 for a held lock and 503 for a failing store, instead of 500.
    { provide: APP_FILTER, useClass: LockExceptionFilter },
  ],
})
export class AppModule {}
