/** A SQL store against a server that is not there: a closed port, or one that accepts and never answers. */
import { describe, expect, test, beforeAll, afterAll } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { LockStoreError, type LockProvider, type MaybePromise } from '../../lib/index.js';

/** Expects `p` to reject with LockStoreError within `maxMs`. */
export async function storeErrorWithin(p: MaybePromise<unknown>, maxMs: number): Promise<LockStoreError> {
  const started = Date.now();
  const err = await Promise.resolve(p).then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LockStoreError);
  expect(Date.now() - started).toBeLessThan(maxMs);
  return err as LockStoreError;
}

/**
 * Registers, for a closed port and for a silent server on 127.0.0.1, a test
 * that every operation of the store `make(port)` builds (with `commandTimeout`
 * 1000) fails with LockStoreError within the bound; its message matches
 * `causes[kind]` when given.
 */
export function describeUnreachableStore(
  label: string,
  make: (port: number, commandTimeout: number) => LockProvider,
  causes: { closed?: RegExp; silent?: RegExp } = {},
): void {
  describe.each([
    ['a closed port', 'closed'],
    ['a server that accepts and never answers', 'silent'],
  ] as const)(`${label} against %s`, (_label, kind) => {
    let server: Server | undefined;
    const sockets: Socket[] = [];
    let provider: LockProvider;
    const commandTimeout = 1_000;

    beforeAll(async () => {
      server = createServer((s) => sockets.push(s));
      await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      const { port } = server.address() as { port: number };
      if (kind === 'closed') {
        await new Promise((r) => server!.close(r));
        server = undefined;
      }
      provider = make(port, commandTimeout);
    });
    afterAll(async () => {
      await provider.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => (server ? server.close(r) : r(undefined)));
    });

    test('every operation answers LockStoreError within the command timeout, never "held"', async () => {
      const bound = commandTimeout + 1_500;
      const err = await storeErrorWithin(
        provider.acquire({ key: 'lock:x', owner: 'a', ttl: 1_000, wait: false }),
        bound,
      );
      expect(err.operation).toBe('acquire');
      if (causes[kind]) expect(err.message).toMatch(causes[kind]);
      await storeErrorWithin(provider.acquire({ key: 'lock:x', owner: 'b', ttl: 1_000, wait: true }), bound);
      await storeErrorWithin(provider.extend('lock:x', 'a', 1_000), bound);
      await storeErrorWithin(provider.release('lock:x', 'a'), bound);
      await storeErrorWithin(provider.ping(), bound);
    }, 30_000);
  });
}
