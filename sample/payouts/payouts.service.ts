import { Injectable } from '@nestjs/common';
import { Locked, currentLock } from '../../lib/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

@Injectable()
export class PayoutsService {
  private batches = 0;

  /** Locked route body lives in the controller; this shows a lock on a plain service method. */
  @Locked('payouts:report', { onHeld: 'wait', waitTimeout: 10_000 })
  async report(): Promise<{ report: number; fencingToken: number }> {
    await sleep(1_000);
    return { report: ++this.batches, fencingToken: currentLock()!.fencingToken };
  }
}
