import { Controller, Injectable, Post, Get, HttpCode } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { Locked } from 'nest-lock';
import { work } from './lock-store.js';

@Injectable()
export class AuditListener {
  runs = 0;

  /** While one runs, the others are skipped (the default for events): no ERROR, no stack. */
  @OnEvent('audit.requested', { async: true })
  @Locked('event-audit')
  async audit(): Promise<void> {
    await work();
    this.runs++;
  }
}

@Controller('events')
export class AuditController {
  constructor(
    private readonly events: EventEmitter2,
    private readonly listener: AuditListener,
  ) {}

  /** Emits three events at once. */
  @Post('fire')
  @HttpCode(202)
  fire(): void {
    for (let i = 0; i < 3; i++) this.events.emit('audit.requested');
  }

  @Get('runs')
  runs(): { runs: number } {
    return { runs: this.listener.runs };
  }
}
