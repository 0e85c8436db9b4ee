import { Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Leader, type Leadership } from 'nest-lock';

/**
 * A loop that must run on one replica at a time: it relays an outbox (here a
 * counter stands in for the messages). `@Leader` starts it on the replica that
 * leads "outbox-relay"; when that replica stops, another takes over.
 */
@Injectable()
export class OutboxRelay {
  private readonly logger = new Logger(OutboxRelay.name);
  /** Batches relayed by this replica. */
  relayed = 0;

  @Leader('outbox-relay', { ttl: 15_000 })
  async relay(leadership: Leadership): Promise<void> {
    this.logger.log(`Leading "outbox-relay" (fencing token ${leadership.fencingToken}): relaying every 2 s`);
    while (leadership.leading) {
      // Read `leading` right before each unit of work; pass the fencing token to the storage it writes.
      this.relayed++;
      await sleep(2_000, undefined, { signal: leadership.signal }).catch(() => {});
    }
    this.logger.log('No longer leading "outbox-relay"');
  }
}
