/**
 * `app.useGlobalFilters(new LockExceptionFilter())` outside HTTP, as
 * docs/contexts.md says: in a hybrid app (HTTP + a TCP microservice through
 * `connectMicroservice`) the app's global filter reaches the microservice's
 * handlers with `{ inheritAppConfig: true }`, and a held lock reaches the RPC
 * client as the 409 object naming the lock, at once. Without the option the
 * microservice has its own (empty) config: Nest's generic error.
 */
import 'reflect-metadata';
import { Controller, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import request from 'supertest';
import { firstValueFrom, timeout } from 'rxjs';
import { InMemoryLockProvider, LockExceptionFilter, LockModule, Locked } from '../../lib/index.js';
import { freePort } from '../support/free-port.js';
import { sleep } from '../support/sleep.js';

@Controller()
class Reports {
  @Post('report')
  @MessagePattern('report')
  @Locked('hybrid-report')
  async report(): Promise<{ done: boolean }> {
    await sleep(500);
    return { done: true };
  }
}

/** Two RPC calls at once: what each caller got (a value, or the error the observable ended with), never a hang. */
async function twoCalls(client: ClientProxy): Promise<Array<{ value: unknown } | { error: unknown }>> {
  const call = () =>
    firstValueFrom(client.send('report', {}).pipe(timeout(10_000))).then(
      (value: unknown) => ({ value }),
      (error: unknown) => ({ error }),
    );
  return Promise.all([call(), call()]);
}

describe.each([
  { inheritAppConfig: true, lost: { status: 409, error: 'Conflict', lock: 'hybrid-report' } },
  { inheritAppConfig: false, lost: { status: 'error', message: 'Internal server error' } },
])(
  'a hybrid app (HTTP + TCP) with useGlobalFilters, connectMicroservice(…, { inheritAppConfig: $inheritAppConfig })',
  ({ inheritAppConfig, lost }) => {
    let app: INestApplication;
    let client: ClientProxy;

    beforeAll(async () => {
      const port = await freePort();
      const ref = await Test.createTestingModule({
        imports: [LockModule.forRoot({ provider: new InMemoryLockProvider() })],
        controllers: [Reports],
      }).compile();
      app = ref.createNestApplication({ logger: false });
      app.useGlobalFilters(new LockExceptionFilter());
      app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }, { inheritAppConfig });
      await app.startAllMicroservices();
      await app.init();
      client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
      await client.connect();
    });

    afterAll(async () => {
      await client?.close();
      await app?.close();
    });

    test(`the caller that lost a @MessagePattern call gets ${inheritAppConfig ? 'the 409 object naming the lock' : "Nest's generic error"}, at once`, async () => {
      const answers = await twoCalls(client);
      expect(answers.filter((a) => 'value' in a)).toEqual([{ value: { done: true } }]);
      const [failed] = answers.filter((a): a is { error: unknown } => 'error' in a);
      expect(failed.error).toEqual(
        inheritAppConfig ? { ...lost, message: expect.stringContaining('Lock "hybrid-report" is held') } : lost,
      );
    });

    test('the HTTP side answers 409 through the same global filter', async () => {
      const calls = [1, 2].map(() => request(app.getHttpServer()).post('/report'));
      const statuses = (await Promise.all(calls)).map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409]);
    });
  },
);
