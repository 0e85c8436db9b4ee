import { Controller, Get } from '@nestjs/common';
import { LeaderService } from 'nest-lock';
import { OutboxRelay } from './outbox.relay.js';

@Controller('outbox')
export class OutboxController {
  constructor(
    private readonly leaders: LeaderService,
    private readonly relay: OutboxRelay,
  ) {}

  /** Who leads "outbox-relay" (this replica or another), and how many batches this one relayed. */
  @Get()
  async status(): Promise<{ leading: boolean; leader: string | null; relayedHere: number }> {
    const leader = await this.leaders.leader('outbox-relay');
    return {
      leading: this.leaders.isLeader('outbox-relay'),
      leader: leader?.instanceId ?? null,
      relayedHere: this.relay.relayed,
    };
  }
}
