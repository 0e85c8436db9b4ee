import { Controller } from '@nestjs/common';
import { EventPattern, MessagePattern } from '@nestjs/microservices';
import { Locked } from 'nest-lock';
import { runId, work } from './lock-store.js';

@Controller()
export class ReportController {
  audits = 0;

  /** Over TCP and Redis: a second caller's observable errors with { status: 409, message, lock }. */
  @MessagePattern(`${runId}.report`)
  @Locked('rpc-report')
  async report(): Promise<{ done: boolean }> {
    await work();
    return { done: true };
  }

  /** An event delivered twice runs once: a held lock skips it (the default for events). */
  @EventPattern(`${runId}.audit`)
  @Locked('rpc-audit')
  async audit(_data: unknown): Promise<void> {
    await work();
    this.audits++;
  }

  @MessagePattern(`${runId}.audits`)
  count(): number {
    return this.audits;
  }
}
