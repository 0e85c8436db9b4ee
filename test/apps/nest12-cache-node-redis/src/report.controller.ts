import { CACHE_MANAGER, type Cache } from '@nestjs/cache-manager';
import { Controller, Inject, Post } from '@nestjs/common';
import { Locked } from 'nest-lock';

@Controller('report')
export class ReportController {
  constructor(@Inject(CACHE_MANAGER) private readonly cache: Cache) {}

  /** One report at a time: while it runs, other callers get 409. The result is cached. */
  @Post()
  @Locked('report')
  async run(): Promise<{ done: boolean }> {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await this.cache.set('report', { done: true });
    return { done: true };
  }
}
