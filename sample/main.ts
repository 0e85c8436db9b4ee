import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { lockStoreName } from './lock-store.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks(); // releases held locks and hands leadership over on SIGTERM
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  new Logger('Sample').log(
    [
      `Sample app on ${base}, locks in ${lockStoreName()}. Try:`,
      `  curl -s -X POST ${base}/payouts/run & curl -s -X POST ${base}/payouts/run; wait`,
      '    -> one pays; the other gets 409 Conflict while the first holds "payouts" (LockExceptionFilter, app-wide)',
      `  curl -s -X POST ${base}/accounts/42/recompute & curl -s -X POST ${base}/accounts/42/recompute & curl -s -X POST ${base}/accounts/7/recompute; wait`,
      '    -> a lock per account: one call for 42 runs, the other gets 409; account 7 is not blocked by 42',
      `  curl -s -X POST ${base}/payouts/report & curl -s -X POST ${base}/payouts/report; wait`,
      "    -> both succeed, one after the other (onHeld: 'wait')",
      `  curl -s ${base}/outbox     -> this replica leads "outbox-relay" (@Leader) and relays`,
      `  curl -s ${base}/health     -> the lock store's health (nest-lock/health, @nestjs/terminus)`,
      `  open ${base}/admin/locks   -> the lock page (nest-lock/dashboard), from this machine only`,
      'The "digest" task runs every 10 s under @Locked. Two replicas sharing locks:',
      `  REDIS_URL=redis://127.0.0.1:6379 npm start, and REDIS_URL=redis://127.0.0.1:6379 PORT=${port + 1} npm start`,
    ].join('\n'),
  );
}

void bootstrap();
