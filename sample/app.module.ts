import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LockModule } from '../lib/index.js';
import { AccountsController } from './accounts/accounts.controller.js';
import { DigestTask } from './digest/digest.task.js';
import { PayoutsController } from './payouts/payouts.controller.js';
import { PayoutsService } from './payouts/payouts.service.js';

/**
 * The sample app. `LockModule.forRoot()` with no options uses the in-memory
 * provider: fine for one process. For several replicas, pass
 * `{ redis: process.env.REDIS_URL }` instead.
 */
@Module({
  imports: [LockModule.forRoot({ ttl: 30_000 }), ScheduleModule.forRoot()],
  controllers: [PayoutsController, AccountsController],
  providers: [PayoutsService, DigestTask],
})
export class AppModule {}
