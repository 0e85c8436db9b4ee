import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { Locked } from 'nest-lock';
import { runId, work } from './lock-store.js';

/** The queue of each way a held job is handled: moved back to delayed (`jobDelay`), or waiting for the lock (`onHeld: 'wait'`). */
export const QUEUES = { delay: `${runId}-reports`, wait: `${runId}-waiting-reports` };

/** How many jobs ran, and the most that ran at once. */
class Runs {
  inside = 0;
  maxInside = 0;
  count = 0;

  async work(): Promise<void> {
    this.inside++;
    this.maxInside = Math.max(this.maxInside, this.inside);
    await work();
    this.inside--;
    this.count++;
  }
}

/** Jobs of one account run one at a time across all workers; a held one goes back to delayed, it does not fail. */
@Processor(QUEUES.delay, { concurrency: 4 })
export class ReportProcessor extends WorkerHost {
  readonly runs = new Runs();

  @Locked((job: Job<{ account: string }>) => `account:${job.data.account}`, { jobDelay: 200 })
  async process(_job: Job<{ account: string }>): Promise<void> {
    await this.runs.work();
  }
}

/** The same with `onHeld: 'wait'`: a held job waits for the lock in its worker slot, then runs. */
@Processor(QUEUES.wait, { concurrency: 2 })
export class WaitingReportProcessor extends WorkerHost {
  readonly runs = new Runs();

  @Locked((job: Job<{ account: string }>) => `waiting:account:${job.data.account}`, {
    onHeld: 'wait',
    waitTimeout: 20_000,
  })
  async process(_job: Job<{ account: string }>): Promise<void> {
    await this.runs.work();
  }
}

@Controller('jobs/:kind')
export class JobsController {
  constructor(
    @InjectQueue(QUEUES.delay) private readonly delayQueue: Queue,
    @InjectQueue(QUEUES.wait) private readonly waitQueue: Queue,
    private readonly delaying: ReportProcessor,
    private readonly waiting: WaitingReportProcessor,
  ) {}

  private of(kind: string): { queue: Queue; runs: Runs } {
    if (kind === 'wait') return { queue: this.waitQueue, runs: this.waiting.runs };
    return { queue: this.delayQueue, runs: this.delaying.runs };
  }

  /** Adds `count` jobs (3 unless given) for one account at once. */
  @Post()
  async add(@Param('kind') kind: string, @Query('count') count = '3'): Promise<{ ids: string[] }> {
    const jobs = await this.of(kind).queue.addBulk(
      Array.from({ length: Number(count) }, () => ({ name: 'report', data: { account: 'a' } })),
    );
    return { ids: jobs.map((j) => j.id!) };
  }

  @Get()
  async stats(@Param('kind') kind: string): Promise<{ runs: number; maxInside: number; states: string[]; failed: string[] }> {
    const { queue, runs } = this.of(kind);
    const jobs = await queue.getJobs(['completed', 'failed', 'delayed', 'wait', 'active']);
    return {
      runs: runs.count,
      maxInside: runs.maxInside,
      states: await Promise.all(jobs.map((j) => j.getState())),
      failed: jobs.map((j) => j.failedReason).filter((r): r is string => !!r),
    };
  }

  @Post('obliterate')
  @HttpCode(204)
  async obliterate(@Param('kind') kind: string): Promise<void> {
    await this.of(kind).queue.obliterate({ force: true });
  }
}
