import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Locked, currentLock } from 'nest-lock';

/**
 * A scheduled task under a lock. On several replicas sharing a store, each
 * tick runs on one of them; the others skip it quietly. `holdAtLeast` keeps
 * the lock for a few seconds so a replica whose clock is a little late does
 * not run the same tick again.
 */
@Injectable()
export class DigestTask {
  private readonly logger = new Logger(DigestTask.name);

  @Cron('*/10 * * * * *')
  @Locked('digest', { holdAtLeast: 5_000 })
  async send(): Promise<void> {
    this.logger.log(`Sending the digest (fencing token ${currentLock()!.fencingToken})`);
  }
}
