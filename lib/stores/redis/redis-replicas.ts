import { LockStoreError } from '../../errors/lock.errors.js';
import { replicaGrantGoneDetail, replicasShortDetail } from '../../errors/lock.messages.js';
import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisPort } from './redis-client.port.js';
import { groupKind } from './redis-lock.scripts.js';
import { CALLS, scriptOf } from './redis-script-calls.js';

/** What {@link replicated} needs besides the grant. @internal */
export interface ReplicaWait {
  readonly commands: RedisCommands;
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
  // The owner-checked extend of the grant (plain or group): decoded to whether the owner holds it.
  const call = groupKind(request) !== undefined ? CALLS.groupExtend : CALLS.extend;
  const input = { key, owner, ttl: Math.max(1, Math.ceil(request.ttl)) };
  const script = scriptOf(call);
  const [keys, args] = [call.keys(input), call.args(input)];
  const send =
    (extendIt: (c: RedisPort) => Promise<unknown>) =>
    (c: RedisPort): Promise<[boolean, number]> =>
      Promise.all([
        grant.queued ? extendIt(c).then((reply) => [true, 'extended'].includes(call.decode(reply))) : true,
        c.command(['WAIT', need, waitMs]).then(Number),
      ]);
  return commands.call({
    operation: 'acquire',
    key,
    send: send((c) => c.evalsha(script.sha, keys, args)),
    resend: send((c) => c.eval(script.source, keys, args)),
    map: ([held, acked]) => {
      if (held && acked >= need) return grant;
      const error = new LockStoreError('acquire', !held ? replicaGrantGoneDetail(key) : replicasShortDetail(acked, need, waitMs, key));
      return wait.giveBack(key, owner).then((): never => {
        throw error;
      });
    },
    onError: () => wait.cleanUp(key, owner),
  });
}
