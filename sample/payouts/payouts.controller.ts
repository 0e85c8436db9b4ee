import { Controller, Post } from '@nestjs/common';
import { Locked, currentLock } from 'nest-lock';
import { PayoutsService } from './payouts.service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

@Controller('payouts')
export class PayoutsController {
  constructor(private readonly payouts: PayoutsService) {}

  /** One payout run at a time: a second caller gets 409 while the first runs. */
  @Post('run')
  @Locked('payouts')
  async run(): Promise<{ status: string; fencingToken: number }> {
    await sleep(2_000);
    // The fencing token rises with every grant: pass it to storage that can refuse a late writer.
    return { status: 'paid', fencingToken: currentLock()!.fencingToken };
  }

  /** Calls a locked service method that waits its turn. */
  @Post('report')
  report(): Promise<{ report: number; fencingToken: number }> {
    return this.payouts.report();
  }
}
