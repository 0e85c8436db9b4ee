import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { LockExceptionFilter, LockModule } from 'nest-lock';
import { LockHealthIndicator } from 'nest-lock/health';
import { DigestTask } from './digest.task';
import { HealthController } from './health.controller';
import { ReportController } from './report.controller';

@Module({
  imports: [ScheduleModule.forRoot(), TerminusModule, LockModule.forRoot()],
  controllers: [ReportController, HealthController],
  providers: [
    DigestTask,
    LockHealthIndicator,
    { provide: APP_FILTER, useClass: LockExceptionFilter },
  ],
})
export class AppModule {}
