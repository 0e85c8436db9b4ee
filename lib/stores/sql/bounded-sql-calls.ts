import { LockOptionsError, LockStoreError } from '../../errors/lock.errors.js';
import { noAnswerDetail, providerClosedDetail, storeAt } from '../../errors/lock.messages.js';

/** What {@link BoundedSqlCalls} needs to know of its store. @internal */
export interface BoundedSqlCallsSettings {
  /** The server's name in messages: `PostgreSQL`, `MySQL`. */
  readonly store: string;
  /** The bound on every call, in ms. */
  readonly commandTimeout: number;
  /** Where the server is, for messages: `host:port`. */
  readonly at: () => string;
  /** What a client error means, in words (the cause named when a later call gets no answer). */
  readonly cause: (err: unknown) => string;
  /** {@link cause} with what to do about it (a missing lock table, ...): the detail of the error a failed call throws. */
  readonly explain: (err: unknown) => string;
  /** Whether the provider is closed to `operation`. */
  readonly closedTo: (operation: string) => boolean;
}

/**
 * The bound on the calls of a SQL store: each runs within `commandTimeout`,
 * and every failure is a {@link LockStoreError} that names its cause (a call
 * that gets no answer names the last failure seen), so that a dead database
 * is never reported as a held lock.
 * @internal
 */
export class BoundedSqlCalls {
  /** The last error of a failed call (cleared by one that succeeds). */
  private lastError: unknown;

  constructor(private readonly settings: BoundedSqlCallsSettings) {}

  /** Runs `fn` for `operation` (on lock `key`, for messages) within the bound. */
  async run<T>(operation: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
    const { store, commandTimeout } = this.settings;
    const where = key === undefined ? '' : ` (key "${key}")`;
    if (this.settings.closedTo(operation))
      throw new LockStoreError(operation, `${providerClosedDetail(store)}${where}`);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const last = this.lastError;
        const cause = last === undefined ? undefined : this.settings.cause(last);
        reject(
          new LockStoreError(
            operation,
            `${noAnswerDetail(storeAt(store, this.settings.at()), commandTimeout, cause)}${where}`,
            { cause: last },
          ),
        );
      }, commandTimeout);
    });
    try {
      const result = await Promise.race([fn(), timeout]);
      this.lastError = undefined;
      return result;
    } catch (err) {
      if (err instanceof LockStoreError || err instanceof LockOptionsError) throw err;
      this.lastError = err;
      throw new LockStoreError(operation, `${this.settings.explain(err)}${where}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }
}
