/**
 * A lock held while the app stops, on a Redis client the app owns and
 * another module closes in its `onModuleDestroy` (as `@nestjs/cache-manager`
 * closes the node-redis client of its Keyv store): the lock module releases
 * it before that client closes, so another instance takes it at once and no
 * error is logged.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import {
  Global,
  Inject,
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type LoggerService,
  type OnModuleDestroy,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { createClient, type RedisClientType } from 'redis';
import { LockManager, LockModule, LockService, type LockHandle } from '../../../lib/index.js';
import { RedisLockProvider } from '../../../lib/stores/redis/index.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keyPrefix = `app-client-shutdown:${randomBytes(4).toString('hex')}:`;
const CLIENT = Symbol('CLIENT');

/** Like cache-manager's module: global, owns the client, closes it when the app's modules are destroyed. */
@Global()
@Module({ providers: [{ provide: CLIENT, useFactory: () => createClient({ url }) }], exports: [CLIENT] })
class ClientModule implements OnModuleDestroy {
  constructor(@Inject(CLIENT) private readonly client: RedisClientType) {}

  async onModuleDestroy(): Promise<void> {
    if (this.client.isOpen) await this.client.close();
  }
}

class RecordingLogger implements LoggerService {
  readonly errors: string[] = [];
  log() {}
  warn() {}
  debug() {}
  verbose() {}
  error(message: unknown) {
    this.errors.push(String(message));
  }
}

test("a lock held at shutdown is released before another module closes the app's client: another instance takes it at once, no error", async () => {
  const logger = new RecordingLogger();
  const ref = await Test.createTestingModule({
    imports: [
      ClientModule,
      LockModule.forRootAsync({
        inject: [CLIENT],
        useFactory: (client: RedisClientType) => ({ redis: client, keyPrefix, commandTimeout: 1_000 }),
      }),
    ],
  })
    .setLogger(logger)
    .compile();
  await ref.init();
  const held = await ref.get(LockService).acquire('held-at-shutdown', { ttl: 60_000 });
  const other = new Redis(url);
  const otherProvider = new RedisLockProvider({ redis: other });
  const otherManager = new LockManager({ provider: otherProvider, keyPrefix });
  try {
    expect(await otherManager.tryAcquire('held-at-shutdown')).toBeNull();
    await ref.close();
    expect(logger.errors).toEqual([]);
    expect(held.held).toBe(false);
    const taken = await otherManager.tryAcquire('held-at-shutdown');
    expect(taken).not.toBeNull();
    await taken!.release();
  } finally {
    await otherManager.close();
    await otherProvider.close();
    await other.quit();
  }
});

/** Notes, in its `beforeApplicationShutdown`, whether the lock it was given is still held. */
@Injectable()
class Witness implements BeforeApplicationShutdown {
  lock: LockHandle | undefined;
  heldBeforeShutdown: boolean | undefined;
  beforeApplicationShutdown(): void {
    this.heldBeforeShutdown = this.lock?.held;
  }
}

test.each([
  [
    "a URL (a connection the module opens): its locks stay held until the lock module's own beforeApplicationShutdown",
    url,
    true,
  ],
  ["an ioredis client of the app: its locks are released in the lock module's onModuleDestroy", 'client', false],
] as const)('a store on %s', async (_, redis, stillHeld) => {
  const client = new Redis(url);
  @Module({ providers: [Witness] })
  class WitnessModule {}
  const ref = await Test.createTestingModule({
    imports: [WitnessModule, LockModule.forRoot({ redis: redis === 'client' ? client : redis, keyPrefix })],
  }).compile();
  try {
    await ref.init();
    const witness = ref.get(Witness);
    witness.lock = await ref.get(LockService).acquire('witnessed', { ttl: 60_000 });
    await ref.close();
    expect(witness.heldBeforeShutdown).toBe(stillHeld);
    expect(witness.lock.held).toBe(false);
    expect(await client.exists(`{${keyPrefix}witnessed}`)).toBe(0);
  } finally {
    await client.quit();
  }
});
