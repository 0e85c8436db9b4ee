import { LockOptionsError } from '../errors/lock.errors.js';
import {
  describeValue,
  oneStoreMessage,
  optionMessage,
  redisOnlyOptionMessage,
  expected,
  waitForReplicasMessage,
} from '../errors/lock.messages.js';
import { LockProvider } from '../contract/lock-provider.js';
import {
  assertMysqlConnection,
  assertPostgresConnection,
  assertRedisConnection,
} from './connection-options.validation.js';
import type { LockStoreOptions } from './lock-store-options.interface.js';
import { assertDuration } from '../contract/lock-limits.validation.js';

/**
 * Checks the store options of an options object (other keys are the
 * caller's to check): one store at most, and what can never connect.
 */
export function assertStoreOptions(options: unknown, where: string): asserts options is LockStoreOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new LockOptionsError(optionMessage('LockModule', 'options', expected.object, options));
  }
  const o = options as Record<string, unknown>;
  if (o.provider !== undefined && !(o.provider instanceof LockProvider)) {
    throw new LockOptionsError(optionMessage(where, 'provider', expected.provider, o.provider));
  }
  assertDuration(o.commandTimeout, 'commandTimeout', where, false);
  const stores = ['provider', 'redis', 'postgres', 'mysql'].filter((k) => o[k] !== undefined);
  if (stores.length > 1) {
    throw new LockOptionsError(oneStoreMessage(where, stores));
  }
  if (o.redis !== undefined) assertRedisConnection(o.redis, where);
  if (o.postgres !== undefined) {
    const pg = o.postgres as Record<string, unknown> | null;
    assertPostgresConnection(pg !== null && typeof pg === 'object' && 'connection' in pg ? pg.connection : pg, where);
  }
  if (o.mysql !== undefined) {
    const my = o.mysql as Record<string, unknown> | null;
    const isOptions =
      my !== null && typeof my === 'object' && 'connection' in my && typeof my.getConnection !== 'function';
    assertMysqlConnection(isOptions ? my.connection : my, where);
  }
  if (o.evictionCheck !== undefined) {
    if (o.evictionCheck !== 'warn' && o.evictionCheck !== 'fail' && o.evictionCheck !== false) {
      throw new LockOptionsError(optionMessage(where, 'evictionCheck', expected.warnFailOrFalse, o.evictionCheck));
    }
    if (o.redis === undefined) throw new LockOptionsError(redisOnlyOptionMessage(where, 'evictionCheck'));
  }
  if (o.waitForReplicas !== undefined) {
    if (!(typeof o.waitForReplicas === 'number' && Number.isInteger(o.waitForReplicas) && o.waitForReplicas >= 0)) {
      throw new LockOptionsError(waitForReplicasMessage(where, describeValue(o.waitForReplicas)));
    }
    if (o.redis === undefined) throw new LockOptionsError(redisOnlyOptionMessage(where, 'waitForReplicas'));
  }
}
