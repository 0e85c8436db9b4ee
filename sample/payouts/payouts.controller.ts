import { Controller, Post } from '@nestjs/common';
import { Locked, currentLock } from '../../lib/index.js';
import { PayoutsService } from './payouts.service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

@Controller('payouts')
export class PayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  /** One payout run at a time. No filter here: a held lock answers 500. */
  @Post('run')
  @Locked('payouts')
  async run(): Promise<{ status: string; fencingToken: number }> {
    await sleep(2_000);
    return { status: 'paid', fencingToken: currentLock()!.fencingToken };
  }

  /** Calls a locked service method that waits its turn. */
  @Post('report')
  report() {
    return this.payouts.report();
  }
}
