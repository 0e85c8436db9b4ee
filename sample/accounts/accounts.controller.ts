import { Controller, Param, Post, UseFilters } from '@nestjs/common';
import { LockExceptionFilter, Locked } from '../../lib/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A lock per account: two accounts never block each other. A held lock answers 409 through the filter. */
@Controller('accounts')
@UseFilters(new LockExceptionFilter())
export class AccountsController {
  @Post(':id/recompute')
  @Locked((id: string) => `account:${id}`)
  async recompute(@Param('id') id: string): Promise<{ account: string; recomputed: true }> {
    await sleep(2_000);
    return { account: id, recomputed: true };
  }
}
