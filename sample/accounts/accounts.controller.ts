import { Controller, Param, Post } from '@nestjs/common';
import { Locked } from 'nest-lock';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A lock per account, named from the route parameter: two accounts never block each other. */
@Controller('accounts')
export class AccountsController {
  @Post(':id/recompute')
  @Locked((id: string) => `account:${id}`)
  async recompute(@Param('id') id: string): Promise<{ account: string; recomputed: true }> {
    await sleep(2_000);
    return { account: id, recomputed: true };
  }
}
