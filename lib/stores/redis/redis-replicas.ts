import { LockStoreError } from '../../errors/lock.errors.js';
import { replicaGrantGoneDetail, replicasShortDetail } from '../../errors/lock.messages.js';
import type { LockAcquireRequest, LockGrant } from '../../contract/lock-provider.js';
import type { RedisCommands } from './redis-commands.js';
import type { RedisWaiters } from './redis-waiters.js';
import type { RedisPort } from './redis-client.port.js';
import { groupKind } from './redis-lock.scripts.js';
import { CALLS, scriptOf } from './redis-script-calls.js';

/**
 * With `waitForReplicas`: a grant is answered once that many replicas have
 * it. `WAIT` counts the writes of this connection, so the grant must be one
 * of them: a grant by this call's own script is; a hand-off (written by the
 * release of another connection) is followed by an owner-checked extend
 * first, in the same write. Fewer replicas in time: the lock goes back
 * before the call fails, so that nobody finds it held afterwards.
 * @internal
 */
export class RedisReplicas {
  /** `replicas`: how many must have a grant (`waitForReplicas`). */
  constructor(
    private readonly commands: RedisCommands,
    private readonly waiters: RedisWaiters,
    private readonly replicas: number,
    private readonly commandTimeout: number,
  ) {}

  /** `grant`, once the replicas have it; else the lock goes back (by the queue's leave script) and the call rejects. */
  confirm(request: LockAcquireRequest, grant: LockGrant): Promise<LockGrant> {
    const need = this.replicas;
    const { key, owner } = request;
    // A little under the call's bound, so that Redis answers with the count before the call gives up.
    const waitMs = Math.max(1, Math.floor(this.commandTimeout * 0.8));
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
    return this.commands.call({
      operation: 'acquire',
      key,
      send: send((c) => c.evalsha(script.sha, keys, args)),
      resend: send((c) => c.eval(script.source, keys, args)),
      map: ([held, acked]) => {
        if (held && acked >= need) return grant;
        const error = new LockStoreError(
          'acquire',
          !held ? replicaGrantGoneDetail(key) : replicasShortDetail(acked, need, waitMs, key),
        );
        return this.waiters.leave(key, owner).then((): never => {
          throw error;
        });
      },
      onError: () => this.waiters.cleanUp(key, owner),
    });
  }
}
