import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  new Logger('Sample').log(
    [
      `Sample app on ${base} (${process.env.REDIS_URL ? 'Redis' : 'in-memory'} lock provider). Try:`,
      `  curl -s -X POST ${base}/payouts/run & curl -s -X POST ${base}/payouts/run; wait`,
      '    -> one answers {"status":"paid",...}; the other gets 500 while the first holds "payouts" (no filter on this route)',
      `  curl -s -X POST ${base}/accounts/42/recompute & curl -s -X POST ${base}/accounts/42/recompute; wait`,
      '    -> one recomputes account 42; the other gets 409 Conflict from LockExceptionFilter',
      `  curl -s -X POST ${base}/accounts/7/recompute   (another account: never blocked by account 42)`,
      `  curl -s -X POST ${base}/payouts/report & curl -s -X POST ${base}/payouts/report; wait`,
      '    -> a locked service method with onHeld: "wait": both succeed, one after the other',
      'The "digest" task runs every 10 s under @Locked; with several replicas on Redis only one would run each tick.',
    ].join('\n'),
  );
}

void bootstrap();
