import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { Locked } from 'nest-lock';
import { runId, work } from './lock-store.js';

export const QUEUE = `${runId}-reports`;

/** Jobs of one account run one at a time across all workers; a held one goes back to delayed, it does not fail. */
@Processor(QUEUE, { concurrency: 4 })
export class ReportProcessor extends WorkerHost {
  inside = 0;
  maxInside = 0;
  runs = 0;

  @Locked((job: Job<{ account: string }>) => `account:${job.data.account}`, { jobDelay: 200 })
  async process(_job: Job<{ account: string }>): Promise<void> {
    this.inside++;
    this.maxInside = Math.max(this.maxInside, this.inside);
    await work();
    this.inside--;
    this.runs++;
  }
}

@Controller('jobs')
export class JobsController {
  constructor(
    @InjectQueue(QUEUE) private readonly queue: Queue,
    private readonly processor: ReportProcessor,
  ) {}

  /** Adds three jobs for one account at once. */
  @Post()
  async add(): Promise<{ ids: string[] }> {
    const jobs = await this.queue.addBulk([1, 2, 3].map(() => ({ name: 'report', data: { account: 'a' } })));
    return { ids: jobs.map((j) => j.id!) };
  }

  @Get()
  async stats(): Promise<{ runs: number; maxInside: number; states: string[]; failed: string[] }> {
    const jobs = await this.queue.getJobs(['completed', 'failed', 'delayed', 'wait', 'active']);
    return {
      runs: this.processor.runs,
      maxInside: this.processor.maxInside,
      states: await Promise.all(jobs.map((j) => j.getState())),
      failed: jobs.map((j) => j.failedReason).filter((r): r is string => !!r),
    };
  }

  @Post('obliterate')
  @HttpCode(204)
  async obliterate(): Promise<void> {
    await this.queue.obliterate({ force: true });
  }
}
