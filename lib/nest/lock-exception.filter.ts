import { Catch, Inject, Logger, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LockAcquireError, LockStoreError } from '../errors/lock.errors.js';
import { storeFailureAnsweredLog, storeFailuresSummaryLog, storeUnavailableMessage } from '../errors/lock.messages.js';
import { LogWindow } from '../engine/lock-log-window.js';
import { LOG_INTERVAL_MS, storeFailureKey } from '../engine/lock-outcomes.js';
import { throwError, type Observable } from 'rxjs';
import { LockGraphQLError } from './graphql-lock-error.js';
import { lockErrorPayload, type LockErrorPayload } from './lock-error-payload.js';
import { sendToWsClient } from './ws-lock-error.js';

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

/**
 * Maps lock errors to answers in each context's own convention: a held lock
 * ({@link LockAcquireError}) to `409 Conflict`, a failed store
 * ({@link LockStoreError}) to `503 Service Unavailable`, each naming the lock.
 * HTTP (Express, Fastify): that status and a JSON {@link LockErrorBody}.
 * GraphQL: an error with `extensions` `{ code: 'CONFLICT' | 'SERVICE_UNAVAILABLE', status, lock }`.
 * Microservices: the client's observable errors with a {@link LockErrorPayload}.
 * WebSockets: an `exception` event with it, and the ack when the client asked
 * for one (global filters do not reach gateways: put `@UseFilters` on the gateway).
 * Without it, Nest answers both with 500 or a generic error. A failed store's
 * cause (address, key) is logged, once per cause a minute, and not sent to the
 * caller unless `detailedStoreErrors` is set. See docs/errors.md.
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
  private readonly storeFailures = new LogWindow(LOG_INTERVAL_MS, (cause, n, s) =>
    logger.warn(storeFailuresSummaryLog(cause, n, s)),
  );

  constructor(@Optional() @Inject(LOCK_EXCEPTION_FILTER_OPTIONS) options?: LockExceptionFilterOptions) {
    this.heldStatus = options?.heldStatus ?? 409;
    this.storeStatus = options?.storeStatus ?? 503;
    this.detailedStoreErrors = options?.detailedStoreErrors ?? false;
  }

  catch(exception: LockAcquireError | LockStoreError, host: ArgumentsHost): unknown {
    const payload = this.payload(exception);
    switch (host.getType<string>()) {
      case 'http':
        return sendHttp(host, payload);
      case 'graphql':
        // Returned, not thrown: Nest hands a GraphQL filter's result to graphql-js, which reports an Error as the field's error.
        return new LockGraphQLError(payload);
      case 'rpc':
        return throwError(() => payload) as Observable<never>;
      case 'ws':
        return sendToWsClient(host.getArgs(), payload);
      default:
        throw exception;
    }
  }

  /** What the caller is told; a store failure's cause is logged here, once per cause and interval. */
  private payload(exception: LockAcquireError | LockStoreError): LockErrorPayload {
    const held = exception instanceof LockAcquireError;
    const status = held ? this.heldStatus : this.storeStatus;
    if (!held && this.storeFailures.first(storeFailureKey(exception)))
      logger.warn(storeFailureAnsweredLog(status, exception.message));
    return lockErrorPayload(
      exception,
      status,
      held || this.detailedStoreErrors ? exception.message : storeUnavailableMessage(exception.lockName),
    );
  }
}

/** Answers an HTTP request with the status and a {@link LockErrorBody}. */
function sendHttp(host: ArgumentsHost, { status, error, message, lock }: LockErrorPayload): void {
  const body: LockErrorBody = { statusCode: status, error, message, lock };
  // Express responses and Fastify replies both have status() and send(object) -> JSON.
  const response = host.switchToHttp().getResponse<{ status(code: number): { send(body: unknown): unknown } }>();
  response.status(status).send(body);
}
