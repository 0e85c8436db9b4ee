/**
 * Loads an optional peer dependency (such as `ioredis`) synchronously, resolved
 * from this package's own folder. A CommonJS file in both builds, so it has
 * `require` whether the library runs as CommonJS or as ES modules; under Jest it
 * is Jest's `require`, so the app's module registry and mocks apply.
 * @internal
 */
export function requirePeer<T>(id: string): T {
  return require(id) as T;
}
