import { Injectable } from '@nestjs/common';
import { Locked, currentLock } from 'nest-lock';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

@Injectable()
export class PayoutsService {
  private reports = 0;

  /** A lock on a plain service method; callers wait their turn (first come, first served) for up to 10 s. */
  @Locked('payouts:report', { onHeld: 'wait', waitTimeout: 10_000 })
  async report(): Promise<{ report: number; fencingToken: number }> {
    await sleep(1_000);
    return { report: ++this.reports, fencingToken: currentLock()!.fencingToken };
  }
}
