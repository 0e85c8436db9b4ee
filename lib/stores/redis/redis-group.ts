import { LockOptionsError } from '../../errors/lock.errors.js';
import { limitMismatchMessage } from '../../errors/lock.messages.js';
import type { LockAcquireRequest, LockExtension, LockGrant } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisWaiters } from './redis-waiters.js';
import { CALLS, type AcquireMode, type AcquireReply, type ScriptCall } from './redis-script-calls.js';

/** The limit a kind asks for (`'x3'` → 3; plain → 1; shared: none). */
function limitOf(kind: string | undefined): number {
  return kind === undefined ? 1 : Number(kind.slice(1));
}

/** A script on the six lock keys: its input without the key and the common last argument, which the provider adds. @internal */
export type LockScriptCommand<I, O, R> = {
  operation: string;
  key: string;
  call: ScriptCall<I & { key: string; common: string }, O>;
  input: I;
  map: (reply: O) => R | PromiseLike<R>;
  onError?: () => void;
};

/** What {@link RedisGroups} runs on the provider's six lock keys. @internal */
export type LockScriptRunner = <I, O, R>(command: LockScriptCommand<I, O, R>) => Promise<R>;

/**
 * Throws the limit-disagreement error when a script answered that the key's
 * exclusive holders or waiters were recorded with another limit than this
 * request's.
 * @internal
 */
export function checkLimit(reply: AcquireReply, key: string, kind: string | undefined): void {
  if (reply.status === 'limit') throw new LockOptionsError(limitMismatchMessage(key, reply.limit, limitOf(kind)));
}

/**
 * Shared (read/write) locks and semaphores of {@link RedisLockProvider}: the
 * group scripts (`group-acquire`, `group-release`, `group-extend`) and the
 * owners that hold a place in a group, whose release and extend take those
 * scripts instead of the plain ones. While a group holds a key, the lock key
 * holds a marker (`#s`, `#x<L>`) that the plain scripts see as a holder that
 * is not them; the holders are `{k}:h` (scored by lease end) with their
 * fencing tokens in `{k}:t`. Waiters of every kind share the one FIFO queue.
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
    /** `run`: a script on the six lock keys; `cleanUp`: after a failed call, leave the queue and give back a place granted meanwhile. */
    private readonly host: { run: LockScriptRunner; cleanUp: (key: string, owner: string) => void },
  ) {}

  /** Acquires for a request of group kind `kind`: a try, or a wait in the shared queue. */
  take(request: LockAcquireRequest, ttl: number, kind: string): Promise<LockGrant | null> {
    if (request.wait && !request.signal?.aborted && request.waitTimeout !== 0) return this.waiters.queue(request, ttl, 1);
    return this.attempt(request.key, request.owner, ttl, '0', kind, this.waiters.grant);
  }

  /** Whether `owner` was granted a place in the group of `key` here (its release and extend are the group's). */
  has(key: string, owner: string): boolean {
    return this.owners.has(`${key} ${owner}`);
  }

  /** Records a group grant. */
  granted(key: string, owner: string): void {
    this.owners.add(`${key} ${owner}`);
  }

  /** One group-acquire call; `map` sees the reply once a limit disagreement has thrown and a grant has been recorded. */
  attempt<R>(key: string, owner: string, ttl: number, mode: AcquireMode, kind: string, map: (reply: AcquireReply) => R): Promise<R> {
    return this.host.run({
      operation: 'acquire',
      key,
      call: CALLS.groupAcquire,
      input: { owner, ttl, mode, kind },
      map: (reply) => {
        checkLimit(reply, key, kind);
        if (reply.status === 'granted' && mode === '0') this.granted(key, owner);
        return map(reply);
      },
      onError: () => this.host.cleanUp(key, owner),
    });
  }

  /** Frees the owner's own place, and grants from the queue. */
  release(key: string, owner: string): Promise<boolean> {
    this.forget(key, owner);
    return this.host.run({ operation: 'release', key, call: CALLS.groupRelease, input: { owner }, map: this.waiters.released });
  }

  /**
   * Owner-checked hand-over of `from`'s permit to `to` (same key, same
   * limit), with a lease of `ttl` and a fresh fencing token; `null` when
   * `from` no longer holds one.
   */
  transfer(key: string, from: string, to: string, ttl: number): Promise<LockGrant | null> {
    this.forget(key, from);
    return this.host.run({
      operation: 'acquire',
      key,
      call: CALLS.groupTransfer,
      input: { from, to, ttl },
      map: (reply): LockGrant | null => {
        this.waiters.handedOff(reply.handOffs);
        if (reply.status !== 'granted') return null;
        this.granted(key, to);
        return { fencingToken: reply.token };
      },
      onError: () => this.host.cleanUp(key, to),
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

  /**
   * `extendMany`: the places in a group granted here each by its own
   * group-extend call, the other locks by `plain` (one batch); the answers
   * in the order of `locks`.
   */
  extendMany(locks: readonly LockExtension[], plain: (locks: readonly LockExtension[]) => Promise<boolean[]>): Promise<boolean[]> {
    const group = locks.map((l) => this.has(l.key, l.owner));
    if (!group.includes(true)) return plain(locks);
    const others = locks.filter((_, i) => !group[i]);
    const extended = locks.filter((_, i) => group[i]).map((l) => this.extend(l.key, l.owner, Math.max(1, Math.ceil(l.ttl))));
    return Promise.all([Promise.all(extended), others.length > 0 ? plain(others) : []]).then(([mine, rest]) => {
      let g = 0;
      let r = 0;
      return group.map((isGroup) => (isGroup ? mine[g++] : rest[r++]));
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
}
