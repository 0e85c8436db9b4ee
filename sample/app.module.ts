import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { LockModule } from '../lib/index.js';
import { AccountsController } from './accounts/accounts.controller.js';
import { DigestTask } from './digest/digest.task.js';
import { PayoutsController } from './payouts/payouts.controller.js';
import { PayoutsService } from './payouts/payouts.service.js';

/**
 * The sample app. Without REDIS_URL it uses the in-memory provider: fine for
 * one process. With REDIS_URL set, every replica shares its locks through Redis.
 */
@Module({
  imports: [LockModule.forRoot(process.env.REDIS_URL ? { redis: process.env.REDIS_URL, ttl: 30_000 } : { ttl: 30_000 }), ScheduleModule.forRoot()],
  controllers: [PayoutsController, AccountsController],
  providers: [PayoutsService, DigestTask],
})
export class AppModule {}
