import { Controller, Post } from '@nestjs/common';
import { Locked } from 'nest-lock';

@Controller('report')
export class ReportController {
  /** One report at a time: while it runs, other callers get 409. */
  @Post()
  @Locked('report')
  async run(): Promise<{ done: boolean }> {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return { done: true };
  }
}
