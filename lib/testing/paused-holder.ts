/**
 * The other process of the paused-holder cases: takes lock `name` (`ttl`,
 * `renew`) in a `withLock` call through a LockManager on the author's store,
 * reads the lock's signal, prints `held <fencingToken>`, then keeps its event
 * loop from running (a synchronous loop, as a long task would) until the
 * file `resume` exists. The suite stops it with SIGSTOP meanwhile, takes the
 * lock from its own process, creates the file and sends SIGCONT. On resuming,
 * before any timer could run, it reads the signal it took before the pause
 * (first), `currentLock()`, `held` and `throwIfAborted()`, and prints
 * `resumed <json>`. With a store of its own (`sharesStore: false`) it then
 * takes the lock with a second manager and prints `other <token>`.
 */
import { existsSync } from 'node:fs';
import type { LockProvider } from '../contract/lock-provider.js';
import { currentLock } from '../engine/lock-context.js';
import { LockManager } from '../engine/lock-manager.js';

/** What the suite passes the child, as JSON in its first argument. @internal */
export interface PausedHolderArgs {
  readonly name: string;
  readonly ttl: number;
  readonly renew: boolean;
  readonly resume: string;
  readonly sharesStore: boolean;
}

const silent = { debug() {}, warn() {}, error() {} };

/**
 * Runs the paused holder on `provider`, with the argument the suite passed
 * (`process.argv[2]`), then closes the provider. The body of the script a
 * target's {@link PausedHolderProcess} starts.
 */
export async function runPausedHolder(provider: LockProvider, argument: string): Promise<void> {
  const { name, ttl, renew, resume, sharesStore } = JSON.parse(argument) as PausedHolderArgs;
  const locks = new LockManager({ provider, logger: silent });
  await provider.ping();
  await locks.withLock(
    name,
    async () => {
      const lock = currentLock()!;
      const signal = lock.signal;
      console.log(`held ${lock.fencingToken}`);
      while (!existsSync(resume));
      const aborted = signal.aborted;
      const current = currentLock(name);
      let threw: string | undefined;
      try {
        signal.throwIfAborted();
      } catch (err) {
        threw = (err as Error).name;
      }
      const seen = {
        aborted,
        currentHeld: current?.held,
        held: lock.held,
        threw,
        reason: (signal.reason as Error | undefined)?.message,
      };
      console.log(`resumed ${JSON.stringify(seen)}`);
      if (!sharesStore) {
        const other = await new LockManager({ provider, logger: silent }).tryAcquire(name);
        console.log(`other ${other?.fencingToken}`);
      }
    },
    { ttl, renew },
  );
  await locks.close();
  await provider.close();
}
