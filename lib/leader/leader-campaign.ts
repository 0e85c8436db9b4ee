import type { LockEngine } from '../engine/lock-engine.interface.js';
import type { HeldLock } from '../engine/held-lock.js';
import type { LockLogger } from '../contract/lock-logger.interface.js';
import type { LeadershipEndReason } from '../contract/lock-events.interface.js';
import { LockError, LockStoreError } from '../errors/lock.errors.js';
import {
  campaignCrashedLog,
  campaignEndedLog,
  campaignStoreBackLog,
  campaignStoreFailedLog,
  electedLog,
  leaderIgnoredShutdownLog,
  leaderOverranLog,
  leaderThrewLog,
  leadershipEndDetails,
  leadershipEndedLog,
  leadershipLostLog,
} from '../errors/lock.messages.js';
import { LEADER_LOCK_PREFIX, type CampaignOptions } from './leader-options.interface.js';
import { LeaderTerm, type Leadership } from './leadership.js';
import { now } from '../shared/clock.js';

/**
 * A replica's campaign for one leader name, from `campaign()` until
 * `stop()`. Returned by `LeaderService.campaign()`.
 */
export interface Campaign {
  /** The leader name. */
  readonly name: string;
  /** This replica's instance id in this campaign. */
  readonly instanceId: string;
  /** `true` while this replica leads the name (checks the local lease clock). */
  readonly isLeader: boolean;
  /** The current term's leadership while this replica leads, else `undefined`. */
  readonly leadership: Leadership | undefined;
  /**
   * Ends the campaign: a leader's `signal` aborts, and once its method has
   * returned (bounded by the lease) the name is released, so another replica
   * takes over at once. Resolves when that is done.
   */
  stop(): Promise<void>;
}

const noop = (): void => {};
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** What a {@link LeaderCampaign} runs with. @internal */
export interface LeaderCampaignSetup {
  readonly name: string;
  readonly instanceId: string;
  readonly options: CampaignOptions & { ttl: number; retryDelay: number };
  readonly engine: LockEngine;
  readonly logger: LockLogger;
  /** Called once the campaign stopped. */
  readonly onStopped: (campaign: LeaderCampaign) => void;
}

/**
 * The campaign loop of one name: wait for the leadership lock (queued in
 * the store, woken when it is released or its lease ends), lead, give up,
 * pause `retryDelay`, again. @internal
 */
export class LeaderCampaign implements Campaign {
  private term: LeaderTerm | undefined;
  private stopped = false;
  private readonly stopper = new AbortController();
  private wakePause: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private readonly lockName: string;
  private readonly ttl: number;
  private readonly retryDelay: number;

  readonly name: string;
  readonly instanceId: string;
  private readonly options: LeaderCampaignSetup['options'];
  private readonly engine: LockEngine;
  private readonly logger: LockLogger;
  private readonly onStopped: LeaderCampaignSetup['onStopped'];

  constructor(setup: LeaderCampaignSetup) {
    this.name = setup.name;
    this.instanceId = setup.instanceId;
    this.options = setup.options;
    this.engine = setup.engine;
    this.logger = setup.logger;
    this.onStopped = setup.onStopped;
    this.lockName = LEADER_LOCK_PREFIX + setup.name;
    this.ttl = setup.options.ttl;
    this.retryDelay = setup.options.retryDelay;
  }

  get isLeader(): boolean {
    return this.term?.leading === true;
  }

  get leadership(): Leadership | undefined {
    return this.term?.leading ? this.term : undefined;
  }

  /** The current term, also while it is ending. @internal */
  get currentTerm(): LeaderTerm | undefined {
    return this.term;
  }

  /** Starts the loop (once). @internal */
  start(): void {
    if (this.loop) return;
    // A campaign is long-lived work, like a server: it keeps the process alive until stopped, also
    // while the store is away (a worker app may have nothing else to keep it running).
    this.keepAlive = setInterval(noop, 2 ** 30);
    this.loop = this.campaign()
      .catch((err: unknown) => {
        this.logger.error(campaignCrashedLog(this.name, message(err)));
      })
      .finally(() => clearInterval(this.keepAlive));
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.stopper.abort();
      this.wakePause?.();
      this.term?.end('stopped', leadershipEndDetails.stopped);
    }
    const loop = this.loop;
    if (loop) {
      // A method that ignores its signal must not hold shutdown forever: after one lease, the name is released anyway.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([
        loop.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), this.ttl))),
      ]);
      clearTimeout(timer);
      if (late) {
        this.logger.warn(leaderIgnoredShutdownLog(this.name, this.ttl));
        await this.term?.lock.release();
      }
    }
    this.onStopped(this);
  }

  private async campaign(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let lock: HeldLock | null;
      try {
        lock = await this.engine.acquireAs(this.lockName, this.instanceId, {
          ttl: this.ttl,
          renew: true,
          signal: this.stopper.signal,
        });
      } catch (err) {
        if (this.stopped) return;
        if (!(err instanceof LockStoreError) && err instanceof LockError) {
          // The lock manager closed (shutdown): nothing left to campaign with.
          this.logger.debug(campaignEndedLog(this.name, err.message));
          return;
        }
        if (failures++ === 0) {
          this.logger.warn(campaignStoreFailedLog(this.name, message(err), this.retryDelay));
        }
        await this.pause(this.retryDelay);
        continue;
      }
      if (!lock) return; // stopped while waiting
      if (failures > 0) this.logger.debug(campaignStoreBackLog(this.name));
      failures = 0;
      if (this.stopped) {
        await lock.release();
        return;
      }
      await this.lead(lock);
      if (!this.stopped) await this.pause(this.retryDelay);
    }
  }

  /** One term: run the method (or wait for the term to end), then release the name. */
  private async lead(lock: HeldLock): Promise<void> {
    const provider = this.engine.provider;
    const watch = provider.watchConnection ? (onLost: () => void) => provider.watchConnection!(onLost) : undefined;
    const term = new LeaderTerm({
      name: this.name,
      instanceId: this.instanceId,
      lock,
      ttl: this.ttl,
      onEnd: (t, reason, detail) => this.ended(t, reason, detail),
      watch,
    });
    this.term = term;
    if (this.engine.observed)
      this.engine.emit({
        type: 'elected',
        name: this.name,
        fencingToken: lock.fencingToken,
        instanceId: this.instanceId,
      });
    this.logger.debug(electedLog(this.instanceId, this.name, lock.fencingToken));
    const run = this.options.run;
    if (run) {
      let outcome: LeadershipEndReason = 'returned';
      let slow: ReturnType<typeof setTimeout> | undefined;
      void term.ended.then(() => {
        // A method that keeps running after its term ended holds the name (renewed) until it returns: warn once.
        slow = setTimeout(() => {
          this.logger.warn(leaderOverranLog(this.name, this.ttl));
        }, this.ttl);
        slow.unref?.();
      });
      try {
        await run(term);
      } catch (err) {
        outcome = 'threw';
        if (term.endReason === undefined) {
          this.logger.error(leaderThrewLog(this.name, this.retryDelay, message(err)));
        }
      } finally {
        clearTimeout(slow);
      }
      term.end(outcome, outcome === 'returned' ? leadershipEndDetails.returned : leadershipEndDetails.threw);
    } else {
      await term.ended;
    }
    await lock.release();
    if (this.term === term) this.term = undefined;
  }

  private ended(term: LeaderTerm, reason: LeadershipEndReason, detail: string): void {
    if (this.engine.observed)
      this.engine.emit({
        type: 'resigned',
        name: this.name,
        fencingToken: term.fencingToken,
        heldMs: now() - term.startedAt,
        reason,
      });
    if (reason === 'lost') this.logger.warn(leadershipLostLog(this.name, term.fencingToken, detail));
    else this.logger.debug(leadershipEndedLog(this.name, term.fencingToken, detail));
  }

  /** Waits `ms`, or less when the campaign stops. */
  private pause(ms: number): Promise<void> {
    if (this.stopped || ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakePause = () => {
        this.wakePause = undefined;
        done();
      };
    });
  }
}
