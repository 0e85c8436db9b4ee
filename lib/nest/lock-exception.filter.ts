import { Catch, Inject, Optional, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { LockAcquireError, LockStoreError } from '../errors/lock.errors.js';

/** Options of {@link LockExceptionFilter}. */
export interface LockExceptionFilterOptions {
  /** Status for a held lock or a wait that timed out ({@link LockAcquireError}). Default `409`. */
  heldStatus?: number;
  /** Status for a failed store ({@link LockStoreError}). Default `503`. */
  storeStatus?: number;
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

const REASONS: Record<number, string> = { 409: 'Conflict', 423: 'Locked', 429: 'Too Many Requests', 503: 'Service Unavailable' };

/**
 * Maps lock errors to HTTP answers: a held lock ({@link LockAcquireError}) to
 * `409 Conflict`, a failed store ({@link LockStoreError}) to
 * `503 Service Unavailable`, each with a JSON body naming the lock. Works on
 * Express and Fastify. Without it, Nest answers both with 500.
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

  constructor(@Optional() @Inject(LOCK_EXCEPTION_FILTER_OPTIONS) options?: LockExceptionFilterOptions) {
    this.heldStatus = options?.heldStatus ?? 409;
    this.storeStatus = options?.storeStatus ?? 503;
  }

  catch(exception: LockAcquireError | LockStoreError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const statusCode = exception instanceof LockAcquireError ? this.heldStatus : this.storeStatus;
    const body: LockErrorBody = {
      statusCode,
      error: REASONS[statusCode] ?? 'Error',
      message: exception.message,
      lock: exception.lockName,
    };
    // Express responses and Fastify replies both have status() and send(object) -> JSON.
    const response = host.switchToHttp().getResponse<{ status(code: number): { send(body: unknown): unknown } }>();
    response.status(statusCode).send(body);
  }
}
