import { LockStoreError } from '../../errors/lock.errors.js';
import {
  evictionPolicyMessage,
  evictionPolicyUnknownMessage,
  policyFieldMissingCause,
  storeOperations,
} from '../../errors/lock.messages.js';
import type { LockLogger } from '../../contract/lock-logger.interface.js';
import type { LockStoreSetup } from '../../contract/lock-provider.js';
import type { RedisClients } from './redis-clients.js';
import type { RedisCommands } from './redis-commands.js';
import { isReplyError } from './redis-client.port.js';

/** What the provider does about a Redis that may evict lock keys (`evictionCheck`). @internal */
export type EvictionCheckMode = 'warn' | 'fail' | false;

/** The one policy under which Redis never evicts a key. */
const SAFE_POLICY = 'noeviction';
const noop = (): void => {};

/** A Redis that refused the command or answered without the field (not a lost connection). */
const isRefusal = (err: unknown): boolean => err instanceof LockStoreError && isReplyError(err.cause);

/**
 * The eviction policy of the Redis that keeps the locks (every master of a
 * Cluster), read by `INFO memory` (which managed services that disable
 * `CONFIG` still answer) when the client connects, after every reconnect (a
 * failover may land on a server set up otherwise), when a Cluster node
 * joins, and on `ping`. Anything but `noeviction` is a problem: logged once
 * per server and policy (a warning through the provider's logger), reported
 * by {@link setup}, and in mode `'fail'` the provider's lock calls wait for
 * the check ({@link before}) and fail with {@link LockStoreError} while it
 * finds one. @internal
 */
export class RedisEvictionCheck {
  private readonly logged = new Set<string>();
  private problems: readonly string[] = [];
  /** Mode `'fail'`: what lock calls fail with while the last check found a problem. */
  private failure: LockStoreError | undefined;
  /** The last check found no problem, and no reconnect came since. */
  private passed = false;
  private running: Promise<void> | undefined;
  private readonly unwatch: () => void;

  constructor(
    private readonly clients: RedisClients,
    private readonly commands: RedisCommands,
    private readonly mode: EvictionCheckMode,
    private readonly logger: LockLogger,
  ) {
    const main = clients.main;
    if (mode === false) {
      this.unwatch = noop;
      return;
    }
    const recheck = (): void => {
      this.passed = false;
      this.run().catch(noop); // a lost connection: the next ready checks again
    };
    main.listen('ready', recheck);
    main.listen('node-added', recheck);
    this.unwatch = () => {
      main.listen('ready', recheck, false);
      main.listen('node-added', recheck, false);
    };
    if (main.status === 'ready') recheck(); // a client passed in already connected
  }

  /** What the last check found, and whether lock calls are refused for it. */
  setup(): LockStoreSetup {
    return { problems: this.problems, refused: this.failure !== undefined };
  }

  /**
   * Runs a lock call: at once, except in mode `'fail'` until a check has
   * passed since the last (re)connect; then after the check (run again while
   * it finds a problem, so that a fix made with `CONFIG SET` is seen), or
   * not at all when it found one (the call rejects with it).
   */
  before<T>(call: () => Promise<T>): Promise<T> {
    if (this.mode !== 'fail' || this.passed) return call();
    return this.run().then(() => {
      if (this.failure) throw this.failure;
      return call();
    });
  }

  /** Checks again (`ping`): rejects only in mode `'fail'`, as {@link before}. */
  refresh(): Promise<void> {
    if (this.mode === false) return Promise.resolve();
    const checked = this.run();
    return this.mode === 'fail' ? checked.then(() => this.before(() => Promise.resolve())) : checked.catch(noop);
  }

  /** Stops watching the client. */
  close(): void {
    this.unwatch();
  }

  /** One check at a time: callers that come while it runs share it. */
  private run(): Promise<void> {
    this.running ??= this.check().finally(() => (this.running = undefined));
    return this.running;
  }

  private async check(): Promise<void> {
    const mode = this.mode === 'fail' ? 'fail' : 'warn';
    const masters = await this.clients.main.masters();
    const found = await Promise.all(
      masters.map(async (node) => {
        const at = node.endpoint();
        try {
          const info = String(
            await this.commands.call({
              operation: storeOperations.evictionInfo,
              client: node,
              send: (c) => c.command(['INFO', 'memory']),
            }),
          );
          const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
          if (policy === undefined) return evictionPolicyUnknownMessage(at, policyFieldMissingCause, mode);
          return policy === SAFE_POLICY ? undefined : evictionPolicyMessage(at, policy, mode);
        } catch (err) {
          if (!isRefusal(err)) throw err;
          return evictionPolicyUnknownMessage(at, (err as LockStoreError).detail, mode);
        }
      }),
    );
    const problems = found.filter((p): p is string => p !== undefined);
    for (const problem of problems) {
      if (this.logged.has(problem)) continue;
      this.logged.add(problem);
      this.logger.warn(problem);
    }
    this.problems = problems;
    this.failure =
      mode === 'fail' && problems.length > 0
        ? new LockStoreError(storeOperations.evictionCheck, problems.join(' '))
        : undefined;
    this.passed = problems.length === 0;
  }
}
