import type { LockManager } from '../engine/lock-manager.js';
import type { LockEngine } from '../engine/lock-engine.interface.js';
import { defaultInstanceId } from '../engine/default-instance-id.js';
import { silentLogger, type LockLogger } from '../contract/lock-logger.interface.js';
import { LockOptionsError } from '../errors/lock.errors.js';
import { campaignAfterStopMessage, noHolderMessage, secondCampaignMessage } from '../errors/lock.messages.js';
import { LeaderCampaign, type Campaign } from './leader-campaign.js';
import {
  DEFAULT_LEADER_RETRY_DELAY,
  DEFAULT_LEADER_TTL,
  LEADER_LOCK_PREFIX,
  type CampaignOptions,
  type LeaderInfo,
} from './leader-options.interface.js';
import { assertInstanceId, assertLeaderName, assertLeaderOptions } from './leader-options.validation.js';
import type { Leadership } from './leadership.js';

/** Settings of a {@link LeaderElection}. */
export interface LeaderElectionOptions {
  /** This replica's id, as other replicas see it. Default `<hostname>:<pid>`. */
  instanceId?: string;
  /** Where to log (leadership lost, a leader method that threw, store failures). Default: nowhere. */
  logger?: LockLogger;
}

/**
 * Leader election, free of Nest, on top of a {@link LockManager}: each
 * replica campaigns for a name, and one at a time leads it. Leadership is a
 * lock named `leader:<name>` whose owner token names the replica's instance
 * id, renewed while the replica lives. `LeaderService` is this engine in a
 * Nest app, and `@Leader` methods campaign through it.
 *
 * @example
 * ```ts
 * const election = new LeaderElection(new LockManager({ provider }), { instanceId: 'worker-1' });
 * election.campaign('outbox-relay', { run: (leadership) => relay(leadership.signal) });
 * // ... on shutdown:
 * await election.stop();
 * ```
 */
export class LeaderElection {
  /** This replica's id, as other replicas see it. */
  readonly instanceId: string;
  private readonly logger: LockLogger;
  private readonly engine: LockEngine;
  private readonly campaigns = new Map<string, LeaderCampaign>();
  private stopping = false;

  constructor(
    /** The lock engine leadership is kept with. */
    readonly locks: LockManager,
    options: LeaderElectionOptions = {},
  ) {
    this.instanceId =
      options.instanceId === undefined ? defaultInstanceId() : assertInstanceId(options.instanceId, 'LeaderElection');
    this.logger = options.logger ?? silentLogger;
    this.engine = locks.engine;
  }

  /**
   * Campaigns for `name` until `stop()`: waits for the name to be free,
   * leads it (calling `options.run` with the leadership), gives it up when
   * `run` settles or the lease is lost, pauses `retryDelay`, and campaigns
   * again. One campaign per name per election. Like a server, a campaign
   * keeps the process alive until it is stopped.
   * @throws {LockOptionsError} for an invalid name or option, or a second campaign for the same name.
   */
  campaign(name: string, options?: CampaignOptions): Campaign {
    const where = `campaign("${String(name)}")`;
    assertLeaderName(name, where);
    assertLeaderOptions(options, where);
    if (this.stopping) throw new LockOptionsError(campaignAfterStopMessage(where));
    if (this.campaigns.has(name)) throw new LockOptionsError(secondCampaignMessage(where, name));
    const campaign = new LeaderCampaign({
      name,
      instanceId: options?.instanceId ?? this.instanceId,
      options: {
        ...options,
        ttl: options?.ttl ?? DEFAULT_LEADER_TTL,
        retryDelay: options?.retryDelay ?? DEFAULT_LEADER_RETRY_DELAY,
      },
      engine: this.engine,
      logger: this.logger,
      onStopped: (c) => {
        if (this.campaigns.get(name) === c) this.campaigns.delete(name);
      },
    });
    this.campaigns.set(name, campaign);
    campaign.start();
    return campaign;
  }

  /** Whether this replica leads `name` now (checks the local lease clock; no store call). */
  isLeader(name: string): boolean {
    return this.campaigns.get(name)?.isLeader === true;
  }

  /** This replica's leadership of `name` while it leads it, else `undefined`. */
  leadership(name: string): Leadership | undefined {
    return this.campaigns.get(name)?.leadership;
  }

  /**
   * The current leader of `name`, as the store tells it (one small store
   * call unless this replica leads), or `null` when nobody leads it now.
   * @throws {LockOptionsError} when the store cannot tell who holds a lock (a custom provider without `holder()`).
   * @throws {LockStoreError} when the store fails.
   */
  async leader(name: string): Promise<LeaderInfo | null> {
    assertLeaderName(name, 'leader()');
    const own = this.campaigns.get(name);
    const term = own?.currentTerm;
    if (own && term?.leading) {
      return {
        name,
        instanceId: own.instanceId,
        self: true,
        remainingMs: Math.max(0, term.lock.leaseEnd - performance.now()),
      };
    }
    const provider = this.engine.provider;
    if (typeof provider.holder !== 'function') {
      throw new LockOptionsError(noHolderMessage(name, provider.kind));
    }
    const holder = await provider.holder(this.engine.keyPrefix + LEADER_LOCK_PREFIX + name);
    if (!holder) return null;
    return { name, instanceId: holder.instanceId, self: false, remainingMs: holder.remainingMs };
  }

  /**
   * Stops every campaign: leaders' signals abort, and once their methods
   * returned (each bounded by its lease) the names are released, so other
   * replicas take over at once. Later `campaign()` calls throw.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.campaigns.values()].map((c) => c.stop()));
  }
}
