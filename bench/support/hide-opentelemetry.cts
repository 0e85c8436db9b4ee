/**
 * Preloaded (`node --require`) into a bench child that must run as if no
 * `@opentelemetry/*` package were installed: resolving one throws
 * `MODULE_NOT_FOUND`, as it does when the package is not in node_modules.
 * The reference for what merely having `@opentelemetry/api` installed costs
 * (scenario 4). CommonJS resolution only: the library loads its optional
 * peers with `require`.
 */
import Module from 'node:module';

type Resolve = (request: string, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const resolve = loader._resolveFilename;

loader._resolveFilename = function hidden(this: unknown, request: string, ...rest: unknown[]): string {
  if (request.startsWith('@opentelemetry/')) {
    throw Object.assign(new Error(`Cannot find module '${request}' (hidden by the bench)`), {
      code: 'MODULE_NOT_FOUND',
    });
  }
  return resolve.call(this, request, ...rest);
};
