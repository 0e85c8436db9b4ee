/**
 * The Nest express app of scenario 5, in its own process (so autocannon in
 * the parent does not share its event loop). `BENCH_PROVIDER` is `memory`,
 * `redis` (nest-lock with that provider) or `murlock` (the peer's
 * `@MurLock` decorator on the same handlers); sends `{ port }` to the parent
 * once listening, answers `{ type: 'cpu' }` with its CPU time so far, and
 * exits on `{ type: 'exit' }`.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import murlock from 'murlock';
import { LockModule, Locked } from '../../lib/index.js';

const { MurLock, MurLockModule } = murlock;

@Controller()
class BenchController {
  @Get('plain/:id')
  plain(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get('distinct/:id')
  @Locked((id: string) => `http:distinct:${id}`)
  distinct(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get('shared/:id')
  @Locked('http:shared', { onHeld: 'wait' })
  shared(@Param('id') id: string): { id: string } {
    return { id };
  }
}

/** The same handlers under murlock's decorator (key: class, method and `id`; one key for `shared`). */
@Controller('murlock')
class MurlockController {
  @Get('distinct/:id')
  @MurLock(10_000, 'id')
  distinct(@Param('id') id: string): Promise<{ id: string }> {
    return Promise.resolve({ id });
  }

  @Get('shared/:id')
  @MurLock(10_000)
  shared(@Param('id') id: string): Promise<{ id: string }> {
    return Promise.resolve({ id });
  }
}

const redisUrl = process.env.BENCH_REDIS_URL!;
const provider = process.env.BENCH_PROVIDER;
// What an app does: LockModule.forRoot() for the in-memory default, forRoot({ redis }) for Redis.
const imports =
  provider === 'murlock'
    ? // Blocking mode, retrying every 10 ms: the README's 3 attempts 1 s apart would fail most waiting requests.
      [
        MurLockModule.forRoot({
          redisOptions: { url: redisUrl },
          wait: 10,
          maxAttempts: 3,
          blocking: true,
          logLevel: 'none',
        }),
      ]
    : [provider === 'redis' ? LockModule.forRoot({ redis: redisUrl }) : LockModule.forRoot()];

@Module({ imports, controllers: [provider === 'murlock' ? MurlockController : BenchController] })
class BenchHttpModule {}

const app = await NestFactory.create(BenchHttpModule, { logger: false });
await app.listen(0, '127.0.0.1');
const address = app.getHttpServer().address() as { port: number };
process.send?.({ port: address.port });
process.on('message', (m: { type: string }) => {
  // The CPU time this server has used, in µs: the parent reads it around each run.
  if (m.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'cpu', us: user + system });
    return;
  }
  if (m.type !== 'exit') return;
  void (async () => {
    await app.close();
    process.exit(0);
  })();
});
process.on('disconnect', () => process.exit(0));
