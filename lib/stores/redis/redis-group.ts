import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisWaiters } from './redis-waiters.js';
import { CALLS, grantOf } from './redis-script-calls.js';

/**
 * Shared (read/write) locks and semaphores of {@link RedisLockProvider}: the
 * group scripts (`group-acquire`, `group-release`, `group-extend`,
 * `group-transfer`) and the owners that hold a place in a group, whose
 * release and extend take those scripts instead of the plain ones. While a
 * group holds a key, the lock key holds a marker (`#s`, `#x<L>`) that the
 * plain scripts see as a holder that is not them; the holders are `{k}:h`
 * (scored by lease end) with their fencing tokens in `{k}:t`. Waiters of
 * every kind share the one FIFO queue ({@link RedisWaiters}, which runs the
 * scripts that touch it).
 * @internal
 */
export class RedisGroups {
  /**
   * `<key> <owner>` of the places in a group granted through this provider:
   * their release and extend go straight to the group scripts (the plain
   * ones answer "a group holds the key" for the others, then they do too).
   */
  private readonly owners = new Set<string>();

  constructor(
    private readonly commands: RedisCommands,
    private readonly waiters: RedisWaiters,
  ) {}

  /** Acquires for a request of group kind `kind`: a try, or a wait in the shared queue. */
  take(request: LockAcquireRequest, ttl: number, kind: string): Promise<LockGrant | null> {
    const { key, owner } = request;
    if (request.wait && !request.signal?.aborted && request.waitTimeout !== 0) {
      return this.waiters.queue(request, ttl, 1).then((grant) => (grant && this.granted(key, owner), grant));
    }
    return this.waiters.attempt({ key, owner, ttl, fences: 1, kind }, '0', (reply) => {
      if (reply.status === 'granted') this.granted(key, owner);
      return grantOf(reply);
    });
  }

  /** Whether `owner` was granted a place in the group of `key` here (its release and extend are the group's). */
  has(key: string, owner: string): boolean {
    return this.owners.has(`${key} ${owner}`);
  }

  /** Frees the owner's own place, and grants from the queue. */
  release(key: string, owner: string): Promise<boolean> {
    this.forget(key, owner);
    return this.waiters.release(key, owner, CALLS.groupRelease);
  }

  /**
   * Owner-checked hand-over of `from`'s permit to `to` (same key, same
   * limit), with a lease of `ttl` and a fresh fencing token; `null` when
   * `from` no longer holds one.
   */
  transfer(key: string, from: string, to: string, ttl: number): Promise<LockGrant | null> {
    this.forget(key, from);
    return this.waiters.lockScript({
      operation: 'acquire',
      key,
      call: CALLS.groupTransfer,
      input: { from, to, ttl },
      map: (reply): LockGrant | null => {
        if (reply.status !== 'granted') return null;
        this.granted(key, to);
        return { fencingToken: reply.token };
      },
      onError: () => this.waiters.cleanUp(key, to),
    });
  }

  /** Owner-checked extend of the owner's own lease. */
  extend(key: string, owner: string, ttl: number): Promise<boolean> {
    return this.commands.script({
      operation: 'extend',
      key,
      call: CALLS.groupExtend,
      input: { key, owner, ttl },
      map: (held) => {
        if (!held) this.forget(key, owner);
        return held;
      },
    });
  }

  /** Forgets a group owner (its grant went back); whether it was one. */
  forget(key: string, owner: string): boolean {
    return this.owners.delete(`${key} ${owner}`);
  }

  /** Forgets every owner (the provider closed). */
  clear(): void {
    this.owners.clear();
  }

  /** Records a group grant. */
  private granted(key: string, owner: string): void {
    this.owners.add(`${key} ${owner}`);
  }
}
