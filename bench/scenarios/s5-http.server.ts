/**
 * The Nest express app of scenario 5, in its own process (so autocannon in
 * the parent does not share its event loop). `BENCH_PROVIDER` is `memory` or
 * `redis`; sends `{ port }` to the parent once listening.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockModule, Locked } from '../../lib/index.js';

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

// What an app does: LockModule.forRoot() for the in-memory default, forRoot({ redis }) for Redis.
const module =
  process.env.BENCH_PROVIDER === 'redis' ? LockModule.forRoot({ redis: process.env.BENCH_REDIS_URL! }) : LockModule.forRoot();

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
    process.exit(0);
  })();
});
process.on('disconnect', () => process.exit(0));
