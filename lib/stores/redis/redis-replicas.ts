import { LockStoreError } from '../../errors/lock.errors.js';
import { replicaGrantGoneDetail, replicasShortDetail } from '../../errors/lock.messages.js';
import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { RedisClient } from './redis-clients.js';
import type { RedisCommands } from './redis-commands.js';
import { groupKind, lockTag, type LockScripts } from './redis-lock.scripts.js';

/** What {@link replicated} needs besides the grant. @internal */
export interface ReplicaWait {
  readonly commands: RedisCommands;
  /** The scripts: the owner-checked extends (plain and group). */
  readonly scripts: LockScripts;
  /** Replicas that must have the grant (`waitForReplicas`). */
  readonly replicas: number;
  readonly commandTimeout: number;
  /** Gives the lock back and resolves when done (never rejects). */
  readonly giveBack: (key: string, owner: string) => Promise<void>;
  /** Gives the lock back in the background, after a failed call. */
  readonly cleanUp: (key: string, owner: string) => void;
}

/**
 * With `waitForReplicas`: answers `grant` once that many replicas have it.
 * `WAIT` counts the writes of this connection, so the grant must be one of
 * them: a grant by this call's own script is; a hand-off (written by the
 * release of another connection) is followed by an owner-checked extend
 * first, in the same write. Fewer replicas in time: the lock goes back
 * before the call fails, so that nobody finds it held afterwards.
 * @internal
 */
export function replicated(wait: ReplicaWait, request: LockAcquireRequest, grant: LockGrant): Promise<LockGrant> {
  const { commands, replicas: need } = wait;
  const { key, owner } = request;
  // A little under the call's bound, so that Redis answers with the count before the call gives up.
  const waitMs = Math.max(1, Math.floor(wait.commandTimeout * 0.8));
  const tag = lockTag(key);
  const group = groupKind(request) !== undefined;
  const extend = group ? wait.scripts.groupExtend : wait.scripts.extend;
  const keys = group ? [tag, `${tag}:h`, `${tag}:t`] : [tag, `${tag}:fence`];
  const ttl = Math.max(1, Math.ceil(request.ttl));
  const send =
    (extendIt: (c: RedisClient) => Promise<unknown>) =>
    (c: RedisClient): Promise<[unknown, number]> =>
      Promise.all([grant.queued ? extendIt(c) : 1, c.wait(need, waitMs)]);
  return commands.call({
    operation: 'acquire',
    key,
    send: send((c) => c.evalsha(extend.sha, keys.length, ...keys, owner, ttl)),
    resend: send((c) => c.eval(extend.source, keys.length, ...keys, owner, ttl)),
    map: ([held, acked]) => {
      if (Number(held) === 1 && acked >= need) return grant;
      const error = new LockStoreError('acquire', Number(held) !== 1 ? replicaGrantGoneDetail(key) : replicasShortDetail(acked, need, waitMs, key));
      // (a promise here is adopted by the call's own)
      return wait.giveBack(key, owner).then(() => {
        throw error;
      }) as unknown as LockGrant;
    },
    onError: () => wait.cleanUp(key, owner),
  });
}
