import { Catch, Inject, Logger, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LockAcquireError, LockStoreError } from '../errors/lock.errors.js';
import { storeFailureAnsweredLog, storeFailuresSummaryLog, storeUnavailableMessage } from '../errors/lock.messages.js';
import { LogWindow } from '../engine/lock-log-window.js';
import { LOG_INTERVAL_MS, storeFailureKey } from '../engine/lock-outcomes.js';

/** Options of {@link LockExceptionFilter}. */
export interface LockExceptionFilterOptions {
  /** Status for a held lock or a wait that timed out ({@link LockAcquireError}). Default `409`. */
  heldStatus?: number;
  /** Status for a failed store ({@link LockStoreError}). Default `503`. */
  storeStatus?: number;
  /**
   * Send a failed store's full message (the store's address, the cause, the
   * key) to the caller instead of "the lock store is unavailable". For
   * internal services only. Default `false`: the cause is logged on the server.
   */
  detailedStoreErrors?: boolean;
}

/**
 * DI token for {@link LockExceptionFilterOptions}, read when Nest builds the
 * filter from its class (`@UseFilters(LockExceptionFilter)`, `APP_FILTER` with `useClass`).
 */
export const LOCK_EXCEPTION_FILTER_OPTIONS = Symbol('LOCK_EXCEPTION_FILTER_OPTIONS');

/** JSON body the filter answers with. */
export interface LockErrorBody {
  statusCode: number;
  error: string;
  message: string;
  /** The lock's name. */
  lock: string | undefined;
}

const logger = new Logger('LockExceptionFilter');

const REASONS: Record<number, string> = { 409: 'Conflict', 423: 'Locked', 429: 'Too Many Requests', 503: 'Service Unavailable' };

/**
 * Maps lock errors to HTTP answers: a held lock ({@link LockAcquireError}) to
 * `409 Conflict`, a failed store ({@link LockStoreError}) to
 * `503 Service Unavailable`, each with a JSON body naming the lock. Works on
 * Express and Fastify. Without it, Nest answers both with 500. A failed
 * store's cause (address, key) is logged, once per cause a minute, and not
 * sent to the caller unless `detailedStoreErrors` is set.
 *
 * @example
 * ```ts
 * app.useGlobalFilters(new LockExceptionFilter());                 // in main.ts
 * // or in a module: { provide: APP_FILTER, useValue: new LockExceptionFilter({ heldStatus: 423 }) }
 * // or by class, with defaults:  @UseFilters(LockExceptionFilter)  /  { provide: APP_FILTER, useClass: LockExceptionFilter }
 * ```
 */
@Catch(LockAcquireError, LockStoreError)
export class LockExceptionFilter implements ExceptionFilter<LockAcquireError | LockStoreError> {
  private readonly heldStatus: number;
  private readonly storeStatus: number;
  private readonly detailedStoreErrors: boolean;
  /** Store failures answered: the cause logged once per interval, the repeats counted. */
  private readonly storeFailures = new LogWindow(LOG_INTERVAL_MS, (cause, n, s) => logger.warn(storeFailuresSummaryLog(cause, n, s)));

  constructor(@Optional() @Inject(LOCK_EXCEPTION_FILTER_OPTIONS) options?: LockExceptionFilterOptions) {
    this.heldStatus = options?.heldStatus ?? 409;
    this.storeStatus = options?.storeStatus ?? 503;
    this.detailedStoreErrors = options?.detailedStoreErrors ?? false;
  }

  catch(exception: LockAcquireError | LockStoreError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const held = exception instanceof LockAcquireError;
    const statusCode = held ? this.heldStatus : this.storeStatus;
    if (!held && this.storeFailures.first(storeFailureKey(exception))) logger.warn(storeFailureAnsweredLog(statusCode, exception.message));
    const body: LockErrorBody = {
      statusCode,
      error: REASONS[statusCode] ?? 'Error',
      message: held || this.detailedStoreErrors ? exception.message : storeUnavailableMessage(exception.lockName),
      lock: exception.lockName,
    };
    // Express responses and Fastify replies both have status() and send(object) -> JSON.
    const response = host.switchToHttp().getResponse<{ status(code: number): { send(body: unknown): unknown } }>();
    response.status(statusCode).send(body);
  }
}
