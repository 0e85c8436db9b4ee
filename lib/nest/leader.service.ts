import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { LOCK_MODULE_OPTIONS } from './lock.module-definition.js';
import type { LockModuleOptions } from './lock-module-options.interface.js';
import { LockService } from './lock.service.js';
import type { Campaign } from '../leader/leader-campaign.js';
import { LeaderElection } from '../leader/leader-election.js';
import type { CampaignOptions, LeaderInfo } from '../leader/leader-options.interface.js';
import type { Leadership } from '../leader/leadership.js';

/**
 * Leader election in a Nest app, for code that is not a `@Leader` method:
 * campaign for a name, ask whether this replica leads, and who does.
 * Changes of this replica's leadership are `elected` / `resigned` events of
 * the module's `onEvent`. Campaigns stop, and leadership is released, when
 * the application shuts down.
 *
 * @example
 * ```ts
 * @Injectable()
 * export class Maintenance implements OnApplicationBootstrap {
 *   constructor(private readonly leaders: LeaderService) {}
 *   onApplicationBootstrap() {
 *     this.leaders.campaign('maintenance', { ttl: 10_000 });
 *   }
 *   @Cron('* * * * *')
 *   sweep() {
 *     if (!this.leaders.isLeader('maintenance')) return;
 *     ...
 *   }
 * }
 * ```
 */
@Injectable()
export class LeaderService implements OnModuleDestroy {
  private readonly election: LeaderElection;

  constructor(locks: LockService, @Inject(LOCK_MODULE_OPTIONS) options: LockModuleOptions) {
    this.election = new LeaderElection(locks.manager, {
      instanceId: options?.instanceId,
      logger: new Logger(LeaderService.name),
    });
  }

  /** This replica's id, as other replicas see it (the module's `instanceId`, default `<hostname>:<pid>`). */
  get instanceId(): string {
    return this.election.instanceId;
  }

  /** {@inheritDoc LeaderElection.campaign} */
  campaign(name: string, options?: CampaignOptions): Campaign {
    return this.election.campaign(name, options);
  }

  /** {@inheritDoc LeaderElection.isLeader} */
  isLeader(name: string): boolean {
    return this.election.isLeader(name);
  }

  /** {@inheritDoc LeaderElection.leadership} */
  leadership(name: string): Leadership | undefined {
    return this.election.leadership(name);
  }

  /** {@inheritDoc LeaderElection.leader} */
  leader(name: string): Promise<LeaderInfo | null> {
    return this.election.leader(name);
  }

  /** Nest lifecycle hook: stops every campaign and releases leadership, before the locks are closed. */
  async onModuleDestroy(): Promise<void> {
    await this.election.stop();
  }
}
