/** A holder whose process does not run past its lease (through LockManager): what it reads on waking, and the next holder's token. */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LockProvider } from '../../contract/lock-provider.js';
import { LockLostError } from '../../errors/lock.errors.js';
import { LockManager } from '../../engine/lock-manager.js';
import type { CaseRegistrar } from '../case-registrar.js';
import { ChildLines } from '../child-lines.js';
import type { PausedHolderArgs } from '../paused-holder.js';
import { sleep } from '../sleep.js';
import { above, check, checkFields, granted, isFalse, isTrue, matches } from '../conformance-assert.js';

const token = () => randomBytes(16).toString('hex');

/** What its LockLostError says: why the lease ended, that the process was not running, and for how long after the end. */
const NOT_RUNNING =
  /the lease ran out while this process was not running .*: it ran again \d+ ms after the end of the lease/;
const silent = { debug() {}, warn() {}, error() {} };

export function leaseTruthCases({ test, describe }: CaseRegistrar): void {
  describe('a holder whose process does not run past its lease (through LockManager)', [], () => {
    for (const renew of [false, true])
      test(`a blocked event loop (renew: ${renew}): the first synchronous read after it says not held, the signal read before it is aborted, another instance gets a higher token`, async ({
        p,
        q,
        onCleanup,
      }) => {
        const manager = (provider: LockProvider): LockManager => {
          const m = new LockManager({ provider, logger: silent });
          onCleanup(() => m.close());
          return m;
        };
        const name = token();
        const h = await manager(p).acquire(name, { ttl: 300, renew });
        const signal = h.signal;
        const end = performance.now() + 700;
        while (performance.now() < end); // as a long synchronous task, a GC pause or SIGSTOP would
        check(signal.aborted, "a lock's signal was not aborted after its lease ran out while the process did not run");
        isFalse(h.held, 'a lock whose lease ran out while the process did not run still reads held');
        check(
          signal.reason instanceof LockLostError,
          `the signal's reason is not a LockLostError (got ${String(signal.reason)})`,
        );
        matches(
          (signal.reason as Error).message,
          NOT_RUNNING,
          'the LockLostError does not say the lease ran out while the process was not running',
        );
        const other = granted(
          await manager(q).tryAcquire(name),
          'another instance could not take a lock whose lease had run out (the lease never ended)',
        );
        above(other.fencingToken, h.fencingToken, "the next holder's fencing token is not above the lost holder's");
        isFalse(await h.release(), "the lost holder's release() answered true: it freed the new holder's lock"); // lost, not released
        check(other.held, 'the new holder does not read held');
        isTrue(await other.release(), "the new holder's release() answered false");
      });

    for (const renew of [false, true])
      test(
        `a child process stopped with SIGSTOP past its lease (renew: ${renew}) while another process takes the lock: on SIGCONT its first synchronous reads say not held and aborted; the other holder has a higher token`,
        async ({ q, options, onCleanup }) => {
          const holder = options.pausedHolder!;
          const sharesStore = holder.sharesStore !== false;
          const name = token();
          const resume = join(tmpdir(), `nest-lock-resume-${token()}`);
          const args: PausedHolderArgs = { name, ttl: 1_000, renew, resume, sharesStore };
          const child = holder.spawn(JSON.stringify(args));
          onCleanup(() => (child.kill('SIGKILL'), rmSync(resume, { force: true })));
          const lines = new ChildLines(child);
          const held = Number(await lines.next('held'));
          child.kill('SIGSTOP');
          const resumeAt = performance.now() + 2_500; // well past the child's 1 s lease
          // Another process (this one) takes the lock while the holder is stopped; a store of the child's own cannot be shared.
          let other: Awaited<ReturnType<LockManager['acquire']>> | undefined;
          if (sharesStore) {
            const m = new LockManager({ provider: q, logger: silent });
            onCleanup(() => m.close());
            other = await m.acquire(name, { ttl: 30_000, waitTimeout: 15_000 });
          }
          await sleep(resumeAt - performance.now());
          writeFileSync(resume, '');
          child.kill('SIGCONT');
          const seen = JSON.parse(await lines.next('resumed')) as Record<string, unknown>;
          checkFields(
            seen,
            { aborted: true, currentHeld: false, held: false, threw: 'LockLostError' },
            'the paused holder, on waking past its lease, did not read its lock as lost',
          );
          matches(
            seen.reason,
            NOT_RUNNING,
            "the paused holder's LockLostError does not say the lease ran out while the process was not running",
          );
          const otherToken = other ? other.fencingToken : Number(await lines.next('other'));
          above(otherToken, held, "the next holder's fencing token is not above the paused holder's");
          if (other) check(other.held, 'the new holder does not read held');
        },
        { needs: ['pausedHolder'], timeout: 60_000 },
      );
  });
}
