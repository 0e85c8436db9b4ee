import { LockJobDelayedError, LockOptionsError } from '../errors/lock.errors.js';
import { notAJobMessage, optionMessage, expected } from '../errors/lock.messages.js';

/** What `jobDelay` needs of a BullMQ job (duck-typed: `bullmq` is not imported). */
interface DelayableJob {
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** How long a job whose lock is held waits before it runs again: ms, or a function of the job (for a backoff). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the processor's own Job type, which this package does not import
export type JobDelay = number | ((job: any) => number);

/**
 * BullMQ's "delayed" pattern for a job whose lock is held: moves the job
 * (`args[0]`, with the worker's `token` as `args[1]`, as `WorkerHost.process(job, token)`
 * receives them) back to delayed and throws {@link LockJobDelayedError}, which
 * the worker takes as "not failed". @internal
 */
export async function delayHeldJob(args: unknown[], lockName: string, delay: JobDelay): Promise<never> {
  const [job, token] = args as [DelayableJob, string];
  const ms = Math.max(0, Math.round(typeof delay === 'function' ? delay(job) : delay));
  await job.moveToDelayed(Date.now() + ms, token);
  throw new LockJobDelayedError(lockName, ms);
}

/** Throws unless `args` are a BullMQ processor's `(job, token)`. @internal */
export function assertJobCall(args: unknown[], where: string): void {
  const [job, token] = args;
  if (typeof (job as DelayableJob | null)?.moveToDelayed !== 'function' || typeof token !== 'string') {
    throw new LockOptionsError(notAJobMessage(where));
  }
}

/** Throws unless `delay` is a duration in ms (0 or more) or a function. @internal */
export function assertJobDelay(delay: unknown, where: string): asserts delay is JobDelay {
  if (typeof delay === 'function' || (typeof delay === 'number' && Number.isFinite(delay) && delay >= 0)) return;
  throw new LockOptionsError(optionMessage(where, 'jobDelay', expected.jobDelay, delay));
}
