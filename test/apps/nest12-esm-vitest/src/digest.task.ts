import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { Locked } from 'nest-lock';

@Injectable()
export class DigestTask {
  private readonly logger = new Logger(DigestTask.name);
  runs = 0;

  /** Every second, on one instance at a time: a held lock skips the tick. */
  @Cron(CronExpression.EVERY_SECOND)
  @Locked('digest')
  async send(): Promise<void> {
    this.runs += 1;
    this.logger.log(`digest sent (${this.runs})`);
  }
}
