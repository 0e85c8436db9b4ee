/**
 * The Nest express app of scenario 5, in its own process (so autocannon in
 * the parent does not share its event loop). `BENCH_PROVIDER` is `memory` or
 * `redis`; sends `{ port }` to the parent once listening.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, Locked, type LockProvider } from '../../lib/index.js';

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

async function lockModule(): Promise<{ module: DynamicModule; provider?: LockProvider }> {
  if (process.env.BENCH_PROVIDER !== 'redis') return { module: LockModule.forRoot() };
  const specifier = '../../lib/providers/redis-lock.provider.js';
  const { RedisLockProvider } = (await import(specifier)) as { RedisLockProvider: new (o: { redis: string }) => LockProvider };
  const provider = new RedisLockProvider({ redis: process.env.BENCH_REDIS_URL! });
  return { module: LockModule.forRoot({ provider }), provider };
}

const { module, provider } = await lockModule();

@Module({ imports: [module], controllers: [BenchController] })
class BenchHttpModule {}

const app = await NestFactory.create(BenchHttpModule, { logger: false });
await app.listen(0, '127.0.0.1');
const address = app.getHttpServer().address() as { port: number };
process.send?.({ port: address.port });
process.on('message', (m: { type: string }) => {
  if (m.type !== 'exit') return;
  void (async () => {
    await app.close();
    await provider?.close();
    process.exit(0);
  })();
});
process.on('disconnect', () => process.exit(0));
