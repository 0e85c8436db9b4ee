/**
 * `@Locked({ nameFromContext })`: the name function gets Nest's ExecutionContext
 * when Nest calls the method as its handler (HTTP, a TCP microservice, a
 * socket.io gateway), and `undefined` for every other call (a provider method
 * called from the handler, the method calling itself, a direct call, a tick).
 */
import 'reflect-metadata';
import {
  BadRequestException,
  Controller,
  Get,
  Headers,
  Injectable,
  Param,
  ParseIntPipe,
  UseFilters,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type INestApplication,
  type INestMicroservice,
  type NestInterceptor,
  type PipeTransform,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  ClientProxyFactory,
  MessagePattern,
  Payload,
  Transport,
  type ClientProxy,
  type TcpContext,
} from '@nestjs/microservices';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { IoAdapter } from '@nestjs/platform-socket.io';
import { ScheduleModule, Interval } from '@nestjs/schedule';
import { io, type Socket as ClientSocket } from 'socket.io-client';
import type { Socket } from 'socket.io';
import request from 'supertest';
import { firstValueFrom, from, map, type Observable } from 'rxjs';
import {
  InMemoryLockProvider,
  LockExceptionFilter,
  LockModule,
  LockOptionsError,
  Locked,
  currentLock,
} from '../../lib/index.js';
import { createHttpApp, httpAdapters } from '../support/http-adapters.js';
import { freePort } from '../support/free-port.js';
import { sleep } from '../support/sleep.js';
import { RecordingLogger } from '../support/recording-logger.js';

/** What each name function saw: the context's type (or undefined) per call. */
const seen: Array<[where: string, type: string | undefined]> = [];
const tenantOf = (ctx: ExecutionContext | undefined): string =>
  ctx?.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-tenant'] ?? 'none';

@Injectable()
class Reports {
  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined, id: number) => {
      seen.push(['Reports.build', ctx?.getType()]);
      return `report:${id}:${tenantOf(ctx)}`;
    },
  })
  async build(_id: number): Promise<string> {
    return currentLock()!.name;
  }

  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined) => {
      if (ctx === undefined) throw new Error('no request here');
      return `tenant:${tenantOf(ctx)}`;
    },
  })
  async strict(): Promise<string> {
    return currentLock()!.name;
  }
}

/** A pipe that calls a provider's @Locked method: it runs inside Nest's call of the handler, before the handler. */
@Injectable()
class BuildPipe implements PipeTransform<string, Promise<string>> {
  constructor(private readonly reports: Reports) {}
  transform(value: string): Promise<string> {
    return this.reports.build(Number(value));
  }
}

/** An interceptor of the user's, around the handler: still runs, above and below @Locked. */
class Tagging implements NestInterceptor {
  constructor(private readonly tag: string) {}
  intercept(_ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((body: Record<string, unknown>) => ({ ...body, [this.tag]: true })));
  }
}

@Controller()
@UseFilters(new LockExceptionFilter())
class ReportsController {
  constructor(private readonly reports: Reports) {}

  @Get('reports/:id')
  @UseInterceptors(new Tagging('above'))
  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined, id: number) => {
      seen.push(['ReportsController.get', ctx?.getType()]);
      return `tenant:${tenantOf(ctx)}:report:${id}`;
    },
  })
  @UseInterceptors(new Tagging('below'))
  async get(@Param('id', ParseIntPipe) id: number, @Headers('x-hold') hold?: string) {
    const lock = currentLock()!.name;
    if (hold) await sleep(Number(hold));
    return { lock, nested: await this.reports.build(id) };
  }

  /** Calls itself once: the inner call is not Nest's call of the handler. */
  @Get('depth/:n')
  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined, n: number) => {
      seen.push([`depth ${n}`, ctx?.getType()]);
      return `depth:${n}:${tenantOf(ctx)}`;
    },
  })
  async depth(@Param('n', ParseIntPipe) n: number): Promise<unknown> {
    const inner = n > 0 ? await this.depth(n - 1) : [];
    return [currentLock()!.name, ...(inner as string[])];
  }

  /** Declared to return an Observable: the body runs when Nest subscribes, and the provider it calls still gets no context. */
  @Get('stream/:id')
  @Locked({ nameFromContext: (ctx: ExecutionContext | undefined, id: number) => `stream:${tenantOf(ctx)}:${id}` })
  stream(@Param('id', ParseIntPipe) id: number): Observable<{ lock: string; nested: string }> {
    const lock = currentLock()!.name;
    return from(this.reports.build(id)).pipe(map((nested) => ({ lock, nested })));
  }

  @Get('piped/:id')
  @Locked({ nameFromContext: (ctx: ExecutionContext | undefined, built: string) => `piped:${tenantOf(ctx)}:${built}` })
  async piped(@Param('id', BuildPipe) _built: string) {
    return currentLock()!.name;
  }

  @Get('bad-name')
  @Locked({ nameFromContext: () => 42 as unknown as string })
  async badName() {
    return 'unreachable';
  }

  @Get('strict')
  strict() {
    return this.reports.strict();
  }
}

describe('@Locked({ nameFromContext }) over HTTP', () => {
  describe.each(httpAdapters)('%s', (_platform, adapter) => {
    let app: INestApplication;
    let logs: RecordingLogger;

    beforeEach(async () => {
      seen.length = 0;
      const ref = await Test.createTestingModule({
        imports: [LockModule.forRoot({ provider: new InMemoryLockProvider() })],
        controllers: [ReportsController],
        providers: [Reports, BuildPipe],
      }).compile();
      app = await createHttpApp(ref, adapter());
      app.useLogger((logs = new RecordingLogger()));
    });

    afterEach(() => app.close());

    test("names the lock from the request's header; the provider method it calls gets no context", async () => {
      const res = await request(app.getHttpServer()).get('/reports/7').set('x-tenant', 'acme').expect(200);
      expect(res.body).toEqual({ lock: 'tenant:acme:report:7', nested: 'report:7:none', above: true, below: true });
      expect(seen).toEqual([
        ['ReportsController.get', 'http'],
        ['Reports.build', undefined],
      ]);
    });

    test('one tenant conflicts with itself, not with another tenant', async () => {
      const server = app.getHttpServer();
      const held = request(server).get('/reports/1').set('x-tenant', 'acme').set('x-hold', '1500');
      const first = held.then((r) => r);
      await sleep(300);
      const [same, other] = await Promise.all([
        request(server).get('/reports/1').set('x-tenant', 'acme'),
        request(server).get('/reports/1').set('x-tenant', 'globex'),
      ]);
      expect(same.status).toBe(409);
      expect(same.body).toMatchObject({ lock: 'tenant:acme:report:1' });
      expect(other.status).toBe(200);
      expect((await first).status).toBe(200);
    });

    test('an Observable handler: its lock is named from the context; the provider it calls gets none', async () => {
      const res = await request(app.getHttpServer()).get('/stream/5').set('x-tenant', 'acme').expect(200);
      expect(res.body).toEqual({ lock: 'stream:acme:5', nested: 'report:5:none' });
      expect(seen).toEqual([['Reports.build', undefined]]);
    });

    test("a provider method called by a pipe, inside Nest's call of the handler, gets no context: it is not the handler", async () => {
      const res = await request(app.getHttpServer()).get('/piped/4').set('x-tenant', 'acme').expect(200);
      expect(res.text).toBe('piped:acme:report:4:none');
      expect(seen).toEqual([['Reports.build', undefined]]);
    });

    test('invalid input is refused by the pipe before any name is computed or lock taken', async () => {
      await request(app.getHttpServer()).get('/reports/abc').set('x-tenant', 'acme').expect(400);
      expect(seen).toEqual([]);
    });

    test('the method calling itself: only the outer call, the handler, gets the context', async () => {
      const res = await request(app.getHttpServer()).get('/depth/1').set('x-tenant', 'acme').expect(200);
      expect(res.body).toEqual(['depth:1:acme', 'depth:0:none']);
      expect(seen).toEqual([
        ['depth 1', 'http'],
        ['depth 0', undefined],
      ]);
    });

    test('a name that is no name fails the call with the LockOptionsError naming the method', async () => {
      await request(app.getHttpServer()).get('/bad-name').expect(500);
      expect(
        logs.lines(
          'error',
          'LockOptionsError: @Locked() on ReportsController.badName (name function): a lock name must be',
        ),
      ).toHaveLength(1);
    });
  });

  test('a direct call gets no context: a name function that needs one fails with LockOptionsError naming the method', async () => {
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: new InMemoryLockProvider() })],
      controllers: [ReportsController],
      providers: [Reports],
    }).compile();
    await ref.init();
    try {
      const err = await ref
        .get(Reports)
        .strict()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockOptionsError);
      expect((err as Error).message).toContain(
        '@Locked() on Reports.strict: the nameFromContext function threw: no request here',
      );
      expect((err as Error).message).toContain('also when it gets no context');
      const bad = await ref
        .get(ReportsController)
        .badName()
        .catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(LockOptionsError);
      expect((bad as Error).message).toContain('ReportsController.badName');
      seen.length = 0;
      await expect(ref.get(ReportsController).get(3)).resolves.toEqual({
        lock: 'tenant:none:report:3',
        nested: 'report:3:none',
      });
      expect(seen).toEqual([
        ['ReportsController.get', undefined],
        ['Reports.build', undefined],
      ]);
    } finally {
      await ref.close();
    }
  });
});

describe('@Locked({ nameFromContext }) at decoration', () => {
  test('name and nameFromContext together are refused', () => {
    expect(() => Locked({ name: 'x', nameFromContext: () => 'y' })({}, 'm', { value: () => 1 })).toThrow(
      /@Locked\(\) on Object\.m: give either name or nameFromContext, not both/,
    );
    expect(() => Locked('x', { nameFromContext: () => 'y' })({}, 'm', { value: () => 1 })).toThrow(LockOptionsError);
  });

  test('a nameFromContext that is not a function is refused', () => {
    expect(() => Locked({ nameFromContext: 'tenant' as never })({}, 'm', { value: () => 1 })).toThrow(
      /nameFromContext must be a function/,
    );
  });

  test('a method without nameFromContext gets no interceptor', () => {
    class Plain {
      @Locked('plain')
      plain() {}
      @Locked({ nameFromContext: () => 'ctx' })
      withContext() {}
    }
    expect(Reflect.getMetadata('__interceptors__', Plain.prototype.plain)).toBeUndefined();
    expect(Reflect.getMetadata('__interceptors__', Plain.prototype.withContext)).toHaveLength(1);
  });
});

@Controller()
class RpcReports {
  @MessagePattern('report.build')
  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined, data: { tenant: string }) => {
      const rpc = ctx?.switchToRpc();
      return `${rpc?.getContext<TcpContext>().getPattern() ?? 'direct'}:${rpc?.getData<{ tenant: string }>().tenant ?? data.tenant}`;
    },
  })
  async build(@Payload() data: { tenant: string; hold?: number }) {
    if (data.hold) await sleep(data.hold);
    return currentLock()!.name;
  }
}

describe('@Locked({ nameFromContext }) on a TCP @MessagePattern', () => {
  let service: INestMicroservice;
  let client: ClientProxy;

  beforeAll(async () => {
    const port = await freePort();
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: new InMemoryLockProvider() })],
      controllers: [RpcReports],
    }).compile();
    service = ref.createNestMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    service.useGlobalFilters(new LockExceptionFilter());
    await service.listen();
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    await client.connect();
  });

  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  test("names the lock from the RPC context's pattern and data", async () => {
    await expect(firstValueFrom(client.send('report.build', { tenant: 'acme' }))).resolves.toBe('report.build:acme');
  });

  test('one tenant conflicts with itself (409 to the client), not with another tenant', async () => {
    const first = firstValueFrom(client.send('report.build', { tenant: 'acme', hold: 1_500 }));
    await sleep(300);
    const same = await firstValueFrom(client.send('report.build', { tenant: 'acme' })).catch((e: unknown) => e);
    expect(same).toMatchObject({ status: 409, lock: 'report.build:acme' });
    await expect(firstValueFrom(client.send('report.build', { tenant: 'globex' }))).resolves.toBe(
      'report.build:globex',
    );
    await expect(first).resolves.toBe('report.build:acme');
  });

  test('called directly, the name comes from the data', async () => {
    await expect(service.get(RpcReports).build({ tenant: 'acme' })).resolves.toBe('direct:acme');
  });
});

@WebSocketGateway()
@UseFilters(new LockExceptionFilter())
class Boards {
  @SubscribeMessage('draw')
  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined) =>
      `board:${ctx?.switchToWs().getClient<Socket>().handshake.auth.board ?? 'none'}`,
  })
  async draw() {
    await sleep(1_000);
    return { lock: currentLock()!.name };
  }
}

describe('@Locked({ nameFromContext }) on a socket.io gateway', () => {
  let app: INestApplication;
  const sockets: ClientSocket[] = [];
  const connect = async (board: string): Promise<ClientSocket> => {
    const socket = io(await app.getUrl(), { auth: { board }, transports: ['websocket'], forceNew: true });
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('connect_error', reject));
    return socket;
  };

  beforeAll(async () => {
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ provider: new InMemoryLockProvider() })],
      providers: [Boards],
    }).compile();
    app = ref.createNestApplication();
    app.useWebSocketAdapter(new IoAdapter(app));
    await app.listen(0, '127.0.0.1');
  });

  afterAll(async () => {
    for (const s of sockets) s.disconnect();
    await app?.close();
  });

  test("names the lock from the client's handshake: one board conflicts with itself, not with another", async () => {
    const [a1, a2, b] = await Promise.all([connect('a'), connect('a'), connect('b')]);
    const first = a1.timeout(10_000).emitWithAck('draw', {});
    await sleep(300);
    const [same, other] = await Promise.all([
      a2.timeout(10_000).emitWithAck('draw', {}),
      b.timeout(10_000).emitWithAck('draw', {}),
    ]);
    expect(same).toMatchObject({ status: 409, lock: 'board:a' });
    expect(other).toEqual({ lock: 'board:b' });
    await expect(first).resolves.toEqual({ lock: 'board:a' });
  });
});

const ticks: Array<ExecutionContext | undefined> = [];

@Injectable()
class Ticker {
  @Interval(50)
  @Locked({
    nameFromContext: (ctx: ExecutionContext | undefined) => {
      ticks.push(ctx);
      return ctx === undefined ? 'tick' : 'request';
    },
  })
  tick() {
    if (currentLock()?.name !== 'tick') throw new BadRequestException('wrong lock');
  }
}

describe('@Locked({ nameFromContext }) under @Interval', () => {
  test('a tick gets no context, and @Interval still finds the method', async () => {
    ticks.length = 0;
    const ref = await Test.createTestingModule({
      imports: [ScheduleModule.forRoot(), LockModule.forRoot({ provider: new InMemoryLockProvider() })],
      providers: [Ticker],
    }).compile();
    await ref.init();
    try {
      for (let i = 0; i < 100 && ticks.length < 2; i++) await sleep(50);
    } finally {
      await ref.close();
    }
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks.every((t) => t === undefined)).toBe(true);
  });
});
