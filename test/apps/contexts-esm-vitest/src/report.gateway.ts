import { UseFilters } from '@nestjs/common';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { LockExceptionFilter, Locked } from 'nest-lock';
import { work } from './lock-store.js';

/** Global filters do not reach gateways: the filter is set here. */
@WebSocketGateway()
@UseFilters(new LockExceptionFilter())
export class ReportGateway {
  @SubscribeMessage('report')
  @Locked('ws-report')
  async report(): Promise<{ done: boolean }> {
    await work();
    return { done: true };
  }
}
