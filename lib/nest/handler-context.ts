import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Observable } from 'rxjs';

/** Nest's call of one handler: the handler (a `@Locked` wrapper) and the call's ExecutionContext. */
interface HandlerCall {
  readonly handler: object;
  readonly context: ExecutionContext;
}

/**
 * Hands Nest's `ExecutionContext` of a handler call to that handler's own
 * `@Locked` wrapper, for `nameFromContext`: {@link HandlerContextInterceptor}
 * sets it around Nest's next handler (pipes, then the method); the wrapper
 * reads it only when it is the handler it was set for, and runs the method
 * without it, so the methods it calls (nested calls, later callbacks) do not
 * see their caller's context. One instance for the process: each
 * AsyncLocalStorage costs every async resource's creation on Node 20.
 * @internal
 */
export class HandlerContexts {
  private readonly calls = new AsyncLocalStorage<HandlerCall>();

  /** Runs `fn` with `context` set for `handler`. */
  run<T>(handler: object, context: ExecutionContext, fn: () => T): T {
    return this.calls.run({ handler, context }, fn);
  }

  /** The context of Nest's call of `handler`, when this call is that one; else `undefined`. */
  contextOf(handler: object): ExecutionContext | undefined {
    const call = this.calls.getStore();
    return call?.handler === handler ? call.context : undefined;
  }

  /** Runs `fn` with no context set. */
  without<T>(fn: () => T): T {
    return this.calls.exit(fn);
  }
}

/**
 * The interceptor `@Locked` attaches to a method with `nameFromContext`: it
 * only records the call's ExecutionContext for that method (it takes no lock:
 * the lock is taken in the method's wrapper, after guards and pipes).
 * @internal
 */
export class HandlerContextInterceptor implements NestInterceptor {
  constructor(
    private readonly contexts: HandlerContexts,
    private readonly handler: object,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Subscribe inside run(): Nest calls the pipes and the method when its handle() is subscribed.
    return new Observable((subscriber) =>
      this.contexts.run(this.handler, context, () => next.handle().subscribe(subscriber)),
    );
  }
}
